import factory

from core.models import AuditEvent


class AuditEventFactory(factory.django.DjangoModelFactory):
    """An audit row with no target; tests that need one pass ``target=`` through
    ``core.audit.record`` instead, as services do."""

    class Meta:
        model = AuditEvent

    action = "core.example.recorded"
    data = factory.LazyFunction(dict)
