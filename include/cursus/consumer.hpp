// cursus/consumer.hpp: Consumer (part of cursus.hpp; include that).
#ifndef CURSUS_CONSUMER_HPP
#define CURSUS_CONSUMER_HPP

#include "observability.hpp"
#include "types.hpp"

namespace cursus {

/// Partitions a rebalance event is about.
using Partitions = std::vector<TopicPartition>;

/// What a consumer's rebalance listener does on each change of its
/// assignment (Consumer::set_rebalance_listener). An empty function
/// ignores its event, except on_lost: when it is empty, the library tells
/// lost partitions as revoked (on_revoked), as in every Cursus language (and
/// as Kafka's Java client does by default).
///
/// The functions run one at a time on a thread of the consumer's own while
/// poll (or close, or subscribe) waits for them, so they may call the
/// consumer: commit, seek, pause, resume, position, committed. poll there
/// throws. An exception they throw is caught and logged (set_log_handler,
/// else std::cerr): it never reaches the library, and the consumer goes on.
struct RebalanceListener {
  /// Partitions added to the assignment, after every join of the group
  /// (possibly none), before any of their records is returned: the place to seek.
  std::function<void(const Partitions &)> on_assigned;
  /// Partitions taken away while still a member (by close, a new
  /// subscribe, or a rebalance): on close and subscribe a commit here still succeeds.
  std::function<void(const Partitions &)> on_revoked;
  /// Partitions lost with an expired session (no chance to commit). Empty: the library tells them as revoked.
  std::function<void(const Partitions &)> on_lost;
};

/// A consumer-group member. close() and wakeup() may be called from another
/// thread and interrupt a blocked poll.
class Consumer {
 public:
  /// Connects with a configuration of kind Consumer (or Any) that has group_id.
  explicit Consumer(const Config &config) {
    cursus_consumer_t *c = nullptr;
    detail::call(cursus_consumer_new, config.c_handle(), &c);
    h_ = detail::Handle<cursus_consumer_t, cursus_consumer_destroy>(c);
  }
  /// Takes over another consumer (which is left empty).
  Consumer(Consumer &&) noexcept = default;
  /// Closes this consumer (as the destructor does), then takes over `o`.
  Consumer &operator=(Consumer &&o) noexcept {
    if (this != &o) {
      close_quietly();
      h_ = std::move(o.h_);  // destroys the old C consumer first,
      listeners_ = std::move(o.listeners_);  // then the listeners it may have called
    }
    return *this;
  }
  /// Closes (commits what was returned when auto-commit is on, leaves the
  /// group; errors ignored), then releases the handle.
  ~Consumer() { close_quietly(); }
  /// Subscribes to topics (replacing any earlier subscription).
  void subscribe(const std::vector<std::string> &topics) {
    std::vector<const char *> names;
    for (const auto &t : topics) names.push_back(t.c_str());
    detail::call(cursus_consumer_subscribe, h_.get(), names.data(), names.size());
  }
  /// Subscribes to every topic matching a glob pattern.
  void subscribe_pattern(const std::string &pattern) {
    detail::call(cursus_consumer_subscribe_pattern, h_.get(), pattern.c_str());
  }
  /// The next message, waiting at most `timeout` (no_timeout: until one
  /// arrives); none after wakeup() or when nothing came in time. Only the
  /// messages returned count as delivered.
  std::optional<Message> poll(std::chrono::milliseconds timeout) {
    cursus_message_t *m = nullptr;
    detail::call(cursus_consumer_poll, h_.get(), detail::millis(timeout), &m);
    if (!m) return std::nullopt;
    return Message(m);
  }
  /// Up to `max_records` records at once (owning copies of their bytes).
  std::vector<Record> poll_batch(std::chrono::milliseconds timeout, uint32_t max_records) {
    uint8_t *buf = nullptr;
    size_t len = 0;
    detail::call(cursus_consumer_poll_batch, h_.get(), detail::millis(timeout), max_records, &buf, &len);
    std::unique_ptr<uint8_t, std::function<void(uint8_t *)>> owned(buf, [len](uint8_t *b) { cursus_buffer_free(b, len); });
    return decode(buf, len);
  }
  /// Makes a blocked (or the next) poll return at once with nothing.
  void wakeup() { detail::call(cursus_consumer_wakeup, h_.get()); }
  /// Commits the positions of the messages returned so far.
  void commit() { detail::call(cursus_consumer_commit, h_.get()); }
  /// Commits in the background; the future completes with the outcome.
  std::future<void> commit_async() {
    auto *promise = new std::promise<void>();
    std::future<void> f = promise->get_future();
    cursus_error_t *err = nullptr;
    cursus_status_t s = cursus_consumer_commit_async(h_.get(), &Consumer::completed, promise, &err);
    if (s != CURSUS_OK) {
      delete promise;
      std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
      detail::throw_from(s, err);
    }
    return f;
  }
  /// Commits explicit next offsets (the offset after the last record
  /// processed), synchronously; the consumer must have joined its group
  /// (polled once after subscribing).
  void commit_offsets(const std::map<TopicPartition, uint64_t> &offsets) {
    auto list = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_topic_partition_list_new);
    for (const auto &o : offsets)
      detail::call(cursus_topic_partition_list_add, list.get(), o.first.topic.c_str(), o.first.partition,
                   static_cast<int64_t>(o.second));
    detail::call(cursus_consumer_commit_offsets, h_.get(), list.get());
  }
  /// The group's committed next offset of a partition (none when nothing was committed).
  std::optional<uint64_t> committed(const std::string &topic, uint32_t partition) {
    int64_t offset = -1;
    detail::call(cursus_consumer_committed, h_.get(), topic.c_str(), partition, &offset);
    return offset < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(offset));
  }
  /// The group's committed next offset of each partition, in one request,
  /// in the order given (none where the group committed nothing).
  std::vector<std::pair<TopicPartition, std::optional<uint64_t>>> committed(const Partitions &partitions) {
    auto list = partition_list(partitions);
    auto l = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_consumer_committed_list, h_.get(), list.get());
    std::vector<std::pair<TopicPartition, std::optional<uint64_t>>> out;
    for (size_t i = 0, n = cursus_topic_partition_list_count(l.get()); i < n; i++) {
      int64_t off = cursus_topic_partition_list_offset(l.get(), i);
      out.emplace_back(TopicPartition{detail::str(cursus_topic_partition_list_topic(l.get(), i)),
                                      static_cast<uint32_t>(cursus_topic_partition_list_partition(l.get(), i))},
                       off < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(off)));
    }
    return out;
  }
  /// The partitions assigned to this member.
  Partitions assignment() {
    return partitions(detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_consumer_assignment, h_.get()));
  }
  /// Makes the next poll return records of an assigned partition from
  /// `offset` on (records already fetched for it are dropped). Throws when
  /// the partition is not assigned: poll joins the group first, and the
  /// rebalance listener's on_assigned is the place to seek before any
  /// record is returned. Commits never move backwards.
  void seek(const TopicPartition &tp, uint64_t offset) {
    detail::call(cursus_consumer_seek, h_.get(), tp.topic.c_str(), tp.partition, offset);
  }
  /// The offset of the next record poll returns for an assigned partition.
  uint64_t position(const TopicPartition &tp) {
    uint64_t offset = 0;
    detail::call(cursus_consumer_position, h_.get(), tp.topic.c_str(), tp.partition, &offset);
    return offset;
  }
  /// Stops returning records of these assigned partitions until resume;
  /// the consumer stays in its group and their positions are kept.
  void pause(const Partitions &partitions) {
    auto list = partition_list(partitions);
    detail::call(cursus_consumer_pause, h_.get(), list.get());
  }
  /// Returns records of these partitions again, from their positions.
  void resume(const Partitions &partitions) {
    auto list = partition_list(partitions);
    detail::call(cursus_consumer_resume, h_.get(), list.get());
  }
  /// The paused partitions, sorted.
  Partitions paused() {
    return partitions(detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_consumer_paused, h_.get()));
  }
  /// Sets the rebalance listener (see RebalanceListener). It is kept, with
  /// every listener it replaces, until this Consumer is destroyed.
  void set_rebalance_listener(RebalanceListener listener) {
    bool has_lost = static_cast<bool>(listener.on_lost);
    RebalanceListener *kept = store().keep(std::move(listener));
    detail::call(cursus_consumer_set_rebalance_listener, h_.get(), &Consumer::rebalanced, static_cast<void *>(kept),
                 has_lost);
  }
  /// Removes the rebalance listener.
  void clear_rebalance_listener() {
    detail::call(cursus_consumer_set_rebalance_listener, h_.get(), cursus_rebalance_event_listener(nullptr),
                 static_cast<void *>(nullptr), false);
  }
  /// The consumer's statistics now, with the lag of every assigned
  /// partition (asks the broker for their end offsets).
  Statistics statistics() { return detail::statistics_of(cursus_consumer_statistics, h_.get()); }
  /// Calls `handler` with the consumer's statistics every `interval` (zero:
  /// the statistics_interval_ms option) on its callback thread; an empty
  /// handler removes it. An exception it throws is caught and logged.
  void set_statistics_handler(std::chrono::milliseconds interval, StatisticsHandler handler) {
    if (!handler) {
      detail::call(cursus_consumer_set_statistics_listener, h_.get(), detail::interval(interval),
                   cursus_statistics_listener(nullptr), static_cast<void *>(nullptr));
      return;
    }
    StatisticsHandler *kept = store().keep(std::move(handler));
    detail::call(cursus_consumer_set_statistics_listener, h_.get(), detail::interval(interval),
                 &detail::statistics_trampoline, static_cast<void *>(kept));
  }
  /// Calls `handler` with each background error (membership lost, a lost
  /// broker connection) on the consumer's callback thread; an empty handler
  /// removes it. An exception it throws is caught and logged.
  void set_error_handler(ErrorHandler handler) {
    if (!handler) {
      detail::call(cursus_consumer_set_error_listener, h_.get(), cursus_error_listener(nullptr),
                   static_cast<void *>(nullptr));
      return;
    }
    ErrorHandler *kept = store().keep(std::move(handler));
    detail::call(cursus_consumer_set_error_listener, h_.get(), &detail::error_trampoline, static_cast<void *>(kept));
  }
  /// This member's id in its group (as Admin::group_status lists it);
  /// empty before it has joined (the first poll after subscribing joins).
  std::string member_id() {
    char *id = nullptr;
    detail::call(cursus_consumer_member_id, h_.get(), &id);
    std::unique_ptr<char, void (*)(char *)> owned(id, cursus_string_free);
    return detail::str(id);
  }
  /// Commits what was returned (with auto-commit), leaves the group and
  /// closes; a poll blocked in another thread throws ClosedError.
  void close() { detail::call(cursus_consumer_close, h_.get()); }
  /// The C handle (owned by this Consumer), e.g. for Producer::send_offsets_to_transaction.
  cursus_consumer_t *c_handle() const noexcept { return h_.get(); }

 private:
  void close_quietly() noexcept {
    if (h_.get()) cursus_consumer_close(h_.get(), nullptr);
  }
  using List = detail::Handle<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>;
  static List partition_list(const Partitions &partitions) {
    auto list = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_topic_partition_list_new);
    for (const auto &tp : partitions)
      detail::call(cursus_topic_partition_list_add, list.get(), tp.topic.c_str(), tp.partition, int64_t(-1));
    return list;
  }
  static Partitions partitions(const List &l) {
    Partitions out;
    for (size_t i = 0, n = cursus_topic_partition_list_count(l.get()); i < n; i++)
      out.push_back(TopicPartition{detail::str(cursus_topic_partition_list_topic(l.get(), i)),
                                   static_cast<uint32_t>(cursus_topic_partition_list_partition(l.get(), i))});
    return out;
  }
  static void rebalanced(void *user_data, const cursus_rebalance_event_t *event) noexcept {
    try {
      const auto &l = *static_cast<const RebalanceListener *>(user_data);
      Partitions parts;
      for (size_t i = 0, n = cursus_rebalance_event_count(event); i < n; i++)
        parts.push_back(TopicPartition{detail::str(cursus_rebalance_event_topic(event, i)),
                                       static_cast<uint32_t>(cursus_rebalance_event_partition(event, i))});
      std::string_view kind = cursus_rebalance_event_kind(event);
      const std::function<void(const Partitions &)> *fn =
          kind == "assigned" ? &l.on_assigned : kind == "revoked" ? &l.on_revoked : &l.on_lost;
      if (*fn) (*fn)(parts);
    } catch (...) {
      detail::report_listener_exception("a rebalance listener");
    }
  }
  static void completed(void *user_data, cursus_status_t status, const cursus_error_t *error) {
    std::unique_ptr<std::promise<void>> p(static_cast<std::promise<void> *>(user_data));
    if (status == CURSUS_OK)
      p->set_value();
    else
      p->set_exception(detail::capture(status, error));
  }
  static uint32_t u32(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  static uint64_t u64(const uint8_t *p) { return uint64_t(u32(p)) | uint64_t(u32(p + 4)) << 32; }
  // A length-prefixed field of the record view (-1: absent).
  template <typename Take>
  static std::optional<std::string> optional(Take &take) {
    int32_t n = static_cast<int32_t>(u32(take(4)));
    if (n < 0) return std::nullopt;
    return std::string(reinterpret_cast<const char *>(take(size_t(n))), size_t(n));
  }
  // The record view of bridge/src/records.rs (little-endian; -1 lengths for absent fields).
  static std::vector<Record> decode(const uint8_t *p, size_t len) {
    std::vector<Record> out;
    if (len < 4) return out;
    const uint8_t *end = p + len;
    uint32_t n = u32(p);
    p += 4;
    auto take = [&](size_t k) {
      if (size_t(end - p) < k) throw InternalError(CURSUS_ERR_INTERNAL, "internal_error (internal): truncated record view",
                                                   "internal_error", "internal", "internal", false, "truncated record view", {});
      const uint8_t *at = p;
      p += k;
      return at;
    };
    for (uint32_t i = 0; i < n; i++) {
      Record r;
      uint32_t tl = u32(take(4));
      r.topic.assign(reinterpret_cast<const char *>(take(tl)), tl);
      r.partition = u32(take(4));
      r.offset = u64(take(8));
      r.timestamp = static_cast<int64_t>(u64(take(8)));
      r.key = optional(take);
      uint32_t vl = u32(take(4));
      r.value.assign(reinterpret_cast<const char *>(take(vl)), vl);
      r.metadata = optional(take);
      if (auto type = optional(take)) {
        RecordEvent e;
        e.type = std::move(*type);
        e.schema_version = u32(take(4));
        e.aggregate_version = static_cast<int64_t>(u64(take(8)));
        e.id = optional(take);
        r.event = std::move(e);
      }
      out.push_back(std::move(r));
    }
    return out;
  }
  detail::ListenerStore &store() {
    if (!listeners_) listeners_ = std::make_unique<detail::ListenerStore>();  // a moved-from object
    return *listeners_;
  }
  // Declared before h_: destroyed after the C consumer, which may call them until then.
  std::unique_ptr<detail::ListenerStore> listeners_ = std::make_unique<detail::ListenerStore>();
  detail::Handle<cursus_consumer_t, cursus_consumer_destroy> h_;
};

}  // namespace cursus

#endif  // CURSUS_CONSUMER_HPP
