"""The plugin registry (benchmark/plugins.py): the built-in plugins found through their entry
points, each implementing the protocol; an unknown key named with what is installed."""

import pytest

from benchmark.plugins import BenchmarkPlugin, UnknownPlugin, get_plugin, plugins, registered
from plugins.medsg.plugin import plugin as medsg
from plugins.medvidbench.plugin import plugin as medvidbench

pytestmark = [pytest.mark.unit]


def test_the_built_in_plugins_are_found_through_their_entry_points():
    found = plugins()
    assert found["medvidbench"] is medvidbench
    assert found["medsg-bench"] is medsg
    for key, plugin in found.items():
        assert isinstance(plugin, BenchmarkPlugin), key
        assert plugin.key == key == plugin.definition.plugin


def test_an_unknown_key_says_what_is_installed():
    with pytest.raises(
        UnknownPlugin, match=r"No benchmark plugin 'nope' .*medsg-bench, medvidbench"
    ):
        get_plugin("nope")


def test_a_plugin_registered_for_a_block_is_gone_after_it():
    class Stand:
        key = "stand-in"

    with registered(Stand()) as stand:
        assert get_plugin("stand-in") is stand
        with pytest.raises(ValueError, match="registered already"), registered(Stand()):
            pass
    with pytest.raises(UnknownPlugin):
        get_plugin("stand-in")
