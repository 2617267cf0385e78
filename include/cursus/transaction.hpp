// cursus/transaction.hpp: Transaction, the RAII scope of one producer transaction (part of cursus.hpp; include that).
#ifndef CURSUS_TRANSACTION_HPP
#define CURSUS_TRANSACTION_HPP

#include "producer.hpp"

namespace cursus {

/// One transaction of a transactional producer (init_transactions() must
/// have been called once), as a scope: the constructor begins it, commit()
/// commits it, and the destructor aborts it unless it was committed or
/// aborted -- when an exception unwinds through the scope, or the scope is
/// left early. The destructor never throws (an abort that fails, e.g.
/// because the producer was fenced, is ignored); it waits for the
/// transaction's sends to finish. The producer must outlive the Transaction.
///
///     producer.init_transactions();
///     for (;;) {
///       cursus::Transaction tx(producer);
///       producer.send("out", process(input));
///       tx.send_offsets(consumer);
///       tx.commit();
///     }
class Transaction {
 public:
  /// Begins a transaction on `producer` (throws as Producer::begin_transaction).
  explicit Transaction(Producer &producer) : producer_(&producer) {
    producer.begin_transaction();
    open_ = true;
  }
  Transaction(const Transaction &) = delete;
  Transaction &operator=(const Transaction &) = delete;
  /// Takes over `o`'s transaction (`o` then ends nothing).
  Transaction(Transaction &&o) noexcept
      : producer_(std::exchange(o.producer_, nullptr)), open_(std::exchange(o.open_, false)) {}
  Transaction &operator=(Transaction &&) = delete;
  /// Aborts the transaction unless it was committed or aborted (errors ignored).
  ~Transaction() {
    if (open_) cursus_producer_abort_transaction(producer_->c_handle(), nullptr);
  }

  /// Adds what `consumer` has delivered so far to the transaction
  /// (Producer::send_offsets_to_transaction).
  void send_offsets(Consumer &consumer) { producer().send_offsets_to_transaction(consumer); }
  /// Adds explicit next offsets to the transaction, fenced by `consumer`'s group session.
  void send_offsets(const std::map<TopicPartition, uint64_t> &offsets, Consumer &consumer) {
    producer().send_offsets_to_transaction(offsets, consumer);
  }
  /// Appends `event` to aggregate `key` inside the transaction
  /// (Producer::append_stream): version `expected_version + 1` once committed.
  Appended append_stream(const std::string &topic, const std::string &key, uint64_t expected_version,
                         const Event &event) {
    return producer().append_stream(topic, key, expected_version, event);
  }
  /// Commits (Producer::commit_transaction). If it throws, the transaction
  /// is still this scope's: commit may be called again, or the destructor
  /// aborts it.
  void commit() {
    producer().commit_transaction();
    open_ = false;
  }
  /// Aborts now (Producer::abort_transaction); the destructor then does nothing.
  void abort() {
    Producer &p = producer();
    open_ = false;
    p.abort_transaction();
  }
  /// Whether the transaction is still this scope's to end: begun, and
  /// neither committed nor aborted.
  bool is_open() const noexcept { return open_; }

 private:
  /// The producer; a Transaction that was moved from has none (throws
  /// InvalidArgumentError, code invalid_transaction_state).
  Producer &producer() const {
    if (!producer_)
      throw InvalidArgumentError(CURSUS_ERR_INVALID_ARGUMENT,
                                 "invalid_transaction_state (validation): this Transaction was moved from",
                                 "invalid_transaction_state", "validation", "invalid_argument", false,
                                 "this Transaction was moved from", {});
    return *producer_;
  }
  Producer *producer_;
  bool open_ = false;
};

}  // namespace cursus

#endif  // CURSUS_TRANSACTION_HPP
