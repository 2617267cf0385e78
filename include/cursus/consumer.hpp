// cursus/consumer.hpp: Consumer (part of cursus.hpp; include that).
#ifndef CURSUS_CONSUMER_HPP
#define CURSUS_CONSUMER_HPP

#include "types.hpp"

namespace cursus {

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
      h_ = std::move(o.h_);
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
  /// The partitions assigned to this member.
  std::vector<TopicPartition> assignment() {
    auto l = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_consumer_assignment, h_.get());
    std::vector<TopicPartition> out;
    for (size_t i = 0, n = cursus_topic_partition_list_count(l.get()); i < n; i++)
      out.push_back(TopicPartition{detail::str(cursus_topic_partition_list_topic(l.get(), i)),
                                   static_cast<uint32_t>(cursus_topic_partition_list_partition(l.get(), i))});
    return out;
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
  // The record view of bridge/src/records.rs (little-endian).
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
      uint32_t kl = u32(take(4));
      r.key.assign(reinterpret_cast<const char *>(take(kl)), kl);
      uint32_t vl = u32(take(4));
      r.value.assign(reinterpret_cast<const char *>(take(vl)), vl);
      out.push_back(std::move(r));
    }
    return out;
  }
  detail::Handle<cursus_consumer_t, cursus_consumer_destroy> h_;
};

}  // namespace cursus

#endif  // CURSUS_CONSUMER_HPP
