"""The Redis task broker, with redelivery: what `Q_REDIS_URL` selects (config/settings/base.py).

django-q2's own Redis broker (1.11.1, `django_q/brokers/redis_broker.py`) takes a task off the
list with BLPOP and has no acknowledgement: a cluster killed while it holds tasks (the one a
worker runs, and the ones its pusher fetched ahead, up to `queue_limit`) loses them for good.
The run a worker was scoring is found again by the scoring reaper (it is in `scoring`), but a
run whose task was only fetched stays `queued` until the five-minute backstop schedule; on a
second machine nothing else would notice. The ORM broker does not lose them: it locks a task
for `retry` seconds when a cluster takes it, deletes it on acknowledgement and hands it out
again once the lock expires. This broker does the same in Redis, so both brokers keep the
promise docs/workers.md relies on ("the broker delivers a task again after a crash"), and the
claim refuses the copy that arrives after the run was scored.

Keys (`<list>` is django-q2's `django_q:<cluster name>:q`):

- `<list>` the waiting tasks, a list (enqueue is RPUSH, as django-q2's, so a cluster of either
  broker class reads what the other wrote);
- `<list>:taken` the tasks handed out and not yet acknowledged: a sorted set of ids, each
  scored by the time (Redis's clock) after which it is handed out again;
- `<list>:payloads` those tasks' payloads, a hash by id; `<list>:ids` the id counter.

Taking a task and recording it as taken is one Lua script, so a task is never in neither
place, and two clusters never take the same waiting task. An overdue task is handed out again
before any waiting one, with a new deadline. Times come from the Redis server (`TIME`), so
machines with different clocks agree on when a task is overdue.
"""

from __future__ import annotations

import logging
from time import sleep

from django.db.models import F, Q, QuerySet
from django_q.brokers.redis_broker import Redis
from django_q.conf import Conf

logger = logging.getLogger(__name__)

# KEYS: list, taken, payloads, ids. ARGV: retry seconds, how many tasks at most.
# Returns id, payload, id, payload, ...
_TAKE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local deadline = now + tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local taken = {}
local overdue = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, limit)
for _, id in ipairs(overdue) do
    local payload = redis.call('HGET', KEYS[3], id)
    if payload then
        redis.call('ZADD', KEYS[2], deadline, id)
        table.insert(taken, id)
        table.insert(taken, payload)
    else
        redis.call('ZREM', KEYS[2], id)
    end
end
while #taken < 2 * limit do
    local payload = redis.call('LPOP', KEYS[1])
    if not payload then
        break
    end
    local id = tostring(redis.call('INCR', KEYS[4]))
    redis.call('HSET', KEYS[3], id, payload)
    redis.call('ZADD', KEYS[2], deadline, id)
    table.insert(taken, id)
    table.insert(taken, payload)
end
return taken
"""


class RedeliveringRedis(Redis):
    """django-q2's Redis broker, with each task kept until acknowledged and handed out again
    `Q_CLUSTER["retry"]` seconds after it was taken (module docstring)."""

    @property
    def taken_key(self) -> str:
        return f"{self.list_key}:taken"

    @property
    def payloads_key(self) -> str:
        return f"{self.list_key}:payloads"

    @property
    def ids_key(self) -> str:
        return f"{self.list_key}:ids"

    def _keys(self) -> list[str]:
        return [self.list_key, self.taken_key, self.payloads_key, self.ids_key]

    def dequeue(self) -> list[tuple[str, bytes]] | None:
        """Up to `Q_CLUSTER["bulk"]` tasks, overdue ones first, each as (id, payload); None
        after a `poll` seconds' pause when there is none (django-q2's pusher calls again)."""
        reply = self.connection.eval(_TAKE, 4, *self._keys(), Conf.RETRY, Conf.BULK)
        if reply:
            return [(_text(reply[i]), reply[i + 1]) for i in range(0, len(reply), 2)]
        sleep(Conf.POLL)
        return None

    def acknowledge(self, task_id: str) -> None:
        """Forget a finished task (django-q2's monitor calls this after a success, and after
        the last of `max_attempts` failures)."""
        with self.connection.pipeline() as pipe:
            pipe.zrem(self.taken_key, task_id)
            pipe.hdel(self.payloads_key, task_id)
            pipe.execute()

    def fail(self, task_id: str) -> None:
        """A task whose payload cannot be read (a bad signature): dropped, as the ORM broker
        does."""
        self.acknowledge(task_id)

    def lock_size(self) -> int:
        """Tasks handed out and not yet acknowledged."""
        return self.connection.zcard(self.taken_key)

    def purge_queue(self) -> None:
        self.connection.delete(self.list_key, self.taken_key, self.payloads_key)

    def delete_queue(self) -> int:
        return self.connection.delete(*self._keys())

    def info(self) -> str:
        return f"{super().info()} (redelivery after {Conf.RETRY} s)"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def broker_holds_no_task(*, holding: int = 0) -> bool:
    """Whether the configured broker (either class) holds no task, waiting or taken by a
    worker, but the `holding` tasks the caller itself runs as; False when it cannot say (the
    broker unreachable). The backstops' sign that tasks the database still waits on were lost
    (`lost_tasks`)."""
    from django_q.brokers import get_broker

    broker = get_broker()
    try:
        waiting, taken = broker.queue_size(), broker.lock_size()
    except Exception:  # whatever the broker's client raises: nothing is known
        logger.warning("the task broker could not say how many tasks it holds", exc_info=True)
        return False
    if waiting is None or taken is None:  # a broker class that does not count
        return False
    return waiting == 0 and taken <= holding


def lost_tasks(waiting: QuerySet, *, holding: int = 0) -> list[int]:
    """The ids of the rows of `waiting` (queued runs or jobs, each annotated with
    `last_queued`, when it last entered the queue, and with a `sent_at`) whose task the broker
    does not hold: those queued after their task last reached it and, once it holds no task
    but the caller's `holding`, all of them (docs/workers.md)."""
    if not broker_holds_no_task(holding=holding):
        waiting = waiting.filter(Q(sent_at__isnull=True) | Q(sent_at__lt=F("last_queued")))
    return list(waiting.values_list("pk", flat=True))
