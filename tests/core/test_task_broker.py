"""core.task_broker: the Redis broker keeps a task until it is acknowledged and hands it out
again `retry` seconds after it was taken, against a real Redis (tests/redis_server.py)."""

import threading
import time
import uuid

import pytest
from django_q.conf import Conf

from core.task_broker import RedeliveringRedis

pytestmark = pytest.mark.integration

RETRY = 1


@pytest.fixture
def broker(redis_url, monkeypatch):
    """A broker on a queue of its own, handing a task out again 1 s after it was taken; its
    keys deleted afterwards."""
    monkeypatch.setattr(Conf, "REDIS", redis_url)
    monkeypatch.setattr(Conf, "RETRY", RETRY)
    monkeypatch.setattr(Conf, "POLL", 0.01)
    monkeypatch.setattr(Conf, "BULK", 1)
    queue = RedeliveringRedis(list_key=f"podium-test-{uuid.uuid4().hex}")
    yield queue
    queue.delete_queue()


def another_cluster(broker):
    """A second broker on the same queue, as another machine's cluster would hold."""
    return RedeliveringRedis(list_key=broker.list_key.removeprefix("django_q:").removesuffix(":q"))


def test_a_taken_task_waits_for_retry_then_is_handed_out_again(broker):
    broker.enqueue("task-1")
    [(task_id, payload)] = broker.dequeue()
    assert payload == b"task-1"
    assert (broker.queue_size(), broker.lock_size()) == (0, 1)

    other = another_cluster(broker)
    assert other.dequeue() is None  # taken, not yet overdue
    time.sleep(RETRY + 0.2)

    assert other.dequeue() == [(task_id, b"task-1")]  # the same task, under the same id
    assert broker.dequeue() is None  # with a new deadline


def test_an_acknowledged_task_is_never_handed_out_again(broker):
    broker.enqueue("task-1")
    [(task_id, _)] = broker.dequeue()
    broker.acknowledge(task_id)
    time.sleep(RETRY + 0.2)

    assert broker.dequeue() is None
    assert (broker.queue_size(), broker.lock_size()) == (0, 0)
    assert broker.connection.hlen(broker.payloads_key) == 0


def test_an_overdue_task_comes_before_a_waiting_one(broker):
    broker.enqueue("first")
    [(first_id, _)] = broker.dequeue()
    broker.enqueue("second")
    time.sleep(RETRY + 0.2)

    assert broker.dequeue() == [(first_id, b"first")]
    assert [payload for _, payload in broker.dequeue()] == [b"second"]


def test_bulk_takes_overdue_and_waiting_tasks_together(broker, monkeypatch):
    monkeypatch.setattr(Conf, "BULK", 3)
    broker.enqueue("a")
    broker.dequeue()
    for name in ("b", "c", "d"):
        broker.enqueue(name)
    time.sleep(RETRY + 0.2)

    assert [payload for _, payload in broker.dequeue()] == [b"a", b"b", b"c"]
    assert (broker.queue_size(), broker.lock_size()) == (1, 3)


def test_clusters_taking_at_once_never_share_a_task(broker):
    count = 300
    for n in range(count):
        broker.enqueue(f"task-{n}")
    clusters = [another_cluster(broker) for _ in range(4)]
    taken: list[list[bytes]] = [[] for _ in clusters]

    def drain(index):
        while tasks := clusters[index].dequeue():
            taken[index].extend(payload for _, payload in tasks)

    threads = [threading.Thread(target=drain, args=(index,)) for index in range(len(clusters))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    every = [payload for payloads in taken for payload in payloads]
    assert sorted(every) == sorted(f"task-{n}".encode() for n in range(count))
    assert broker.lock_size() == count


def test_a_failed_payload_is_dropped(broker):
    broker.enqueue("unreadable")
    [(task_id, _)] = broker.dequeue()
    broker.fail(task_id)
    time.sleep(RETRY + 0.2)

    assert broker.dequeue() is None


def test_delete_queue_removes_every_key(broker):
    broker.enqueue("a")
    broker.enqueue("b")
    broker.dequeue()

    broker.delete_queue()

    assert broker.connection.keys(f"{broker.list_key}*") == []
