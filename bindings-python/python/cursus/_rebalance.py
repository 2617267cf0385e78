"""The rebalance listener: what a consumer tells the application when its
assignment changes (see :meth:`cursus.Consumer.set_rebalance_listener` and the
``on_assign``/``on_revoke``/``on_lost`` arguments of
:meth:`cursus.Consumer.subscribe`)."""

from __future__ import annotations

from typing import Callable, List

from ._cursus import TopicPartition

__all__ = ["RebalanceCallback", "RebalanceListener"]

#: A callback of ``subscribe(on_assign=, on_revoke=, on_lost=)``: called with
#: the partitions of the event; its return value is ignored.
RebalanceCallback = Callable[[List[TopicPartition]], object]


class RebalanceListener:
    """Base class of rebalance listeners: override the methods you need.

    The consumer calls them one at a time on its listener thread (never an
    engine I/O thread, never concurrently with each other) while ``poll``
    (or ``close``, or ``subscribe``) waits for them to return, so records of
    newly assigned partitions are returned only after
    :meth:`on_partitions_assigned` returned. Inside them the consumer may be
    called again -- ``commit``, ``seek``, ``pause``, ``resume``,
    ``position``, ``committed`` -- except ``poll``, which raises
    :class:`cursus.ValidationError` there. An exception a method raises is
    logged (logger ``cursus``, with its traceback) and ignored: the consumer
    goes on.
    """

    def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        """These partitions were added to the assignment: told after every
        join of the group (possibly with an empty list), before any of
        their records is returned. ``seek`` here starts them elsewhere than
        at the committed offset."""

    def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        """These partitions are being taken away while this consumer is
        still a member (``close``, a new ``subscribe``, a rebalance): a
        ``commit`` here still counts."""

    def on_partitions_lost(self, partitions: List[TopicPartition]) -> None:
        """The session expired: these partitions were lost without a chance
        to commit. Called only when overridden: otherwise the consumer tells
        a loss through :meth:`on_partitions_revoked`, as Kafka's Java client
        and confluent-kafka do (the library's rule, the same in every Cursus
        language); override it to tell the two apart."""
