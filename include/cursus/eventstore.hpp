// cursus/eventstore.hpp: EventStore, paged reads (EventCursor) and the Aggregate<State> helper (part of cursus.hpp; include that).
#ifndef CURSUS_EVENTSTORE_HPP
#define CURSUS_EVENTSTORE_HPP

#include "types.hpp"

#include <cstdlib>
#include <iterator>

namespace cursus {

/// An event to append. Payload, metadata and event type are UTF-8 text.
/// `{"OrderCreated", payload}` or `{"OrderCreated", payload, metadata, 2}`.
struct Event {
  /// An empty event.
  Event() = default;
  /// An event of `event_type` carrying `payload`.
  Event(std::string event_type, std::string payload, std::string metadata = {}, uint32_t schema_version = 0)
      : event_type(std::move(event_type)),
        payload(std::move(payload)),
        metadata(std::move(metadata)),
        schema_version(schema_version) {}
  std::string event_type;      ///< Event type name (e.g. "OrderCreated"); may be empty.
  std::string payload;         ///< Payload text (e.g. JSON).
  std::string metadata;        ///< Metadata text; may be empty.
  uint32_t schema_version = 0; ///< Schema version of the payload (0: the broker's default, 1).
};

/// Where an appended event went.
struct Appended {
  uint64_t version;   ///< The version it got (expected_version + 1).
  uint64_t offset;    ///< Its offset.
  uint32_t partition; ///< Its aggregate's partition.
};

/// An aggregate's saved state.
struct Snapshot {
  uint64_t version;  ///< The aggregate version the state includes.
  std::string state; ///< The serialised state.
};

/// One stored event (or, for a browse read, any record) with every field.
struct StoredEvent {
  std::string topic;       ///< Topic.
  uint32_t partition = 0;  ///< Partition.
  uint64_t offset = 0;     ///< Offset in the partition.
  int64_t timestamp = 0;   ///< Milliseconds since the epoch (0 when unknown).
  std::string key;         ///< Aggregate key (empty for a record without one).
  uint64_t version = 0;    ///< Version in the stream (0 for a browsed record that is no event).
  std::string event_type;  ///< Event type.
  uint32_t schema_version = 0; ///< Schema version of the payload.
  std::string metadata;    ///< Metadata text.
  std::string payload;     ///< Payload (text for events; any bytes for browsed records).
};

/// One page of a read.
struct EventPage {
  uint32_t partition = 0;                       ///< The partition read.
  bool has_more = false;                        ///< More pages follow.
  std::optional<Snapshot> snapshot;             ///< Stream reads, first page: the snapshot the events follow.
  std::vector<StoredEvent> events;              ///< The events (or browsed records), in order.
  std::string completeness;                     ///< History reads: "complete", "partial" or "unknown"; else empty.
  std::optional<uint64_t> head_version;         ///< History reads: the aggregate's current version.
  std::optional<uint64_t> readable_end_offset;  ///< Browse reads: the end of what is readable.
};

/// How much one page may hold; 0 takes the broker's default.
struct PageLimits {
  uint32_t max_records = 0; ///< Most events or records (READ_STREAM: 256 by default; others: 100).
  uint32_t max_bytes = 0;   ///< Most bytes (READ_STREAM: 8 MiB by default; others: 1 MiB).
};

/// Every page of a read at once (EventCursor::read_all).
struct StreamRead {
  std::optional<Snapshot> snapshot; ///< The first page's snapshot (stream reads).
  std::vector<StoredEvent> events;  ///< Every event, in order.
  size_t pages = 0;                 ///< How many pages were read.
};

/// A `version_conflict`: the aggregate was not at the expected version
/// (another writer appended first). Load it again and decide again.
class VersionConflictError : public ConflictError {
 public:
  /// The conflict error `e` (code version_conflict), typed.
  explicit VersionConflictError(const Error &e)
      : ConflictError(e.status(), e.what(), e.code(), e.error_class(), e.kind(), e.retryable(), e.message(),
                      e.fields()) {}
  /// The aggregate's current version (field `current`).
  uint64_t current() const { return number("current"); }
  /// The version the append expected (field `expected`).
  uint64_t expected() const { return number("expected"); }

 private:
  uint64_t number(const char *name) const {
    auto it = fields().find(name);
    return it == fields().end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
  }
};

namespace detail {

/// Like call(), but a version_conflict throws VersionConflictError.
template <typename F, typename... A>
inline void es_call(F f, A... args) {
  try {
    call(f, args...);
  } catch (const ConflictError &e) {
    if (e.code() == "version_conflict") throw VersionConflictError(e);
    throw;
  }
}

/// `s` as a C string; a NUL inside (where a C string would end, cutting the
/// text short) throws InvalidArgumentError.
inline const char *text(const std::string &s, const char *name) {
  if (s.find('\0') != std::string::npos) {
    std::string msg = std::string(name) + " must not contain a NUL byte";
    throw InvalidArgumentError(CURSUS_ERR_INVALID_ARGUMENT, "invalid_argument (validation): " + msg, "invalid_argument",
                               "validation", "invalid_argument", false, msg, {});
  }
  return s.c_str();
}

/// A snapshot from its handle (consumed; none for NULL).
inline std::optional<Snapshot> snapshot(cursus_snapshot_t *h) {
  Handle<cursus_snapshot_t, cursus_snapshot_destroy> owned(h);
  if (!h) return std::nullopt;
  return Snapshot{cursus_snapshot_version(h), str(cursus_snapshot_state(h))};
}

inline std::string bytes_at(const uint8_t *p, size_t n) {
  return n ? std::string(reinterpret_cast<const char *>(p), n) : std::string();
}

/// A page from its handle (consumed); `topic` is the cursor's.
inline EventPage event_page(cursus_event_page_t *h, const std::string &topic) {
  Handle<cursus_event_page_t, cursus_event_page_destroy> owned(h);
  EventPage page;
  page.partition = cursus_event_page_partition(h);
  page.has_more = cursus_event_page_has_more(h);
  cursus_snapshot_t *snap = nullptr;
  call(cursus_event_page_snapshot, h, &snap);
  page.snapshot = snapshot(snap);
  page.completeness = str(cursus_event_page_completeness(h));
  if (!page.completeness.empty()) page.head_version = cursus_event_page_head_version(h);
  int64_t end = cursus_event_page_readable_end_offset(h);
  if (end >= 0) page.readable_end_offset = static_cast<uint64_t>(end);
  size_t n = cursus_event_page_count(h);
  page.events.reserve(n);
  for (size_t i = 0; i < n; i++) {
    StoredEvent e;
    e.topic = topic;
    e.partition = page.partition;
    e.offset = static_cast<uint64_t>(cursus_event_page_offset(h, i));
    e.timestamp = cursus_event_page_timestamp(h, i);
    size_t len = 0;
    const uint8_t *k = cursus_event_page_key(h, i, &len);
    e.key = bytes_at(k, len);
    e.version = cursus_event_page_version(h, i);
    e.event_type = str(cursus_event_page_event_type(h, i));
    e.schema_version = cursus_event_page_schema_version(h, i);
    e.metadata = str(cursus_event_page_metadata(h, i));
    const uint8_t *p = cursus_event_page_payload(h, i, &len);
    e.payload = bytes_at(p, len);
    page.events.push_back(std::move(e));
  }
  return page;
}

}  // namespace detail

/// A paged read: a range of EventPage, read from the broker one page at a
/// time as it is iterated (an input range: iterate it once).
///
///     for (const cursus::EventPage &page : store.read_stream("orders", "order-1"))
///       for (const cursus::StoredEvent &e : page.events) apply(e);
///
/// A failed read throws from begin() or ++ and leaves the cursor where it
/// was: iterating again retries that page. The EventStore must outlive
/// the cursor.
class EventCursor {
 public:
  /// Input iterator over the pages.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag; ///< Input iterator.
    using value_type = EventPage;                      ///< A page.
    using difference_type = std::ptrdiff_t;            ///< Unused.
    using pointer = EventPage *;                       ///< Pointer to a page.
    using reference = EventPage &;                     ///< Reference to a page.
    /// The end iterator.
    iterator() = default;
    /// The current page.
    reference operator*() const { return *cursor_->page_; }
    /// The current page.
    pointer operator->() const { return &*cursor_->page_; }
    /// Reads the next page (throws on failure).
    iterator &operator++() {
      if (!cursor_->advance()) cursor_ = nullptr;
      return *this;
    }
    /// Reads the next page (throws on failure).
    void operator++(int) { ++*this; }
    /// Both at the end, or both on the same cursor.
    bool operator==(const iterator &o) const { return cursor_ == o.cursor_; }
    /// Not ==.
    bool operator!=(const iterator &o) const { return cursor_ != o.cursor_; }

   private:
    friend class EventCursor;
    explicit iterator(EventCursor *c) : cursor_(c) {}
    EventCursor *cursor_ = nullptr;
  };

  /// Takes ownership of a C cursor read through `store`.
  EventCursor(cursus_event_store_t *store, cursus_event_cursor_t *cursor, std::string topic)
      : store_(store), h_(cursor), topic_(std::move(topic)) {}

  /// Reads the first page (if not read yet); the end when there is none.
  iterator begin() {
    if (!started_) advance();
    return page_ ? iterator(this) : iterator();
  }
  /// The end.
  iterator end() { return iterator(); }

  /// Reads the next page, or none once every page was read.
  std::optional<EventPage> next() {
    if (!advance()) return std::nullopt;
    return std::move(page_);
  }
  /// True once every page was read.
  bool done() const noexcept { return cursus_event_cursor_done(h_.get()); }

  /// Reads every remaining page: the first page's snapshot and all events.
  StreamRead read_all() {
    StreamRead out;
    while (auto page = next()) {
      if (out.pages++ == 0) out.snapshot = std::move(page->snapshot);
      for (auto &e : page->events) out.events.push_back(std::move(e));
    }
    return out;
  }

  /// The C handle (owned by this cursor).
  cursus_event_cursor_t *c_handle() const noexcept { return h_.get(); }

 private:
  /// Reads the next page into page_; false (page_ empty) once done.
  bool advance() {
    started_ = true;
    page_.reset();
    cursus_event_page_t *p = nullptr;
    detail::call(cursus_event_store_next_page, store_, h_.get(), &p);
    if (!p) return false;
    page_ = detail::event_page(p, topic_);
    return true;
  }
  cursus_event_store_t *store_;
  detail::Handle<cursus_event_cursor_t, cursus_event_cursor_destroy> h_;
  std::string topic_;
  std::optional<EventPage> page_;
  bool started_ = false;
};

/// Event store client (event-sourcing topics: `docs/event-sourcing.md`).
/// Aggregate keys are text without whitespace (InvalidArgumentError
/// otherwise, before anything is sent); payloads, metadata and states are
/// UTF-8 text (a NUL byte in any of them throws InvalidArgumentError: a C
/// string would end there). Safe to use from several threads at once.
class EventStore {
 public:
  /// Connects with a configuration of kind Admin (or Any).
  explicit EventStore(const Config &config) {
    cursus_event_store_t *s = nullptr;
    detail::call(cursus_event_store_new, config.c_handle(), &s);
    h_ = detail::Handle<cursus_event_store_t, cursus_event_store_destroy>(s);
  }

  /// Appends `event` to aggregate `key` if it is at `expected_version` (0
  /// for a new aggregate): the event gets expected_version + 1. Otherwise
  /// throws VersionConflictError (a ConflictError with current() and
  /// expected()).
  Appended append(const std::string &topic, const std::string &key, uint64_t expected_version, const Event &event) {
    cursus_appended_t *a = nullptr;
    detail::es_call(cursus_event_store_append, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"),
                    expected_version, detail::text(event.event_type, "event type"),
                    detail::text(event.payload, "payload"),
                    event.metadata.empty() ? nullptr : detail::text(event.metadata, "metadata"), event.schema_version,
                    &a);
    detail::Handle<cursus_appended_t, cursus_appended_destroy> owned(a);
    return Appended{cursus_appended_version(a), cursus_appended_offset(a), cursus_appended_partition(a)};
  }
  /// The aggregate's current version (0 when it has no event).
  uint64_t stream_version(const std::string &topic, const std::string &key) {
    uint64_t v = 0;
    detail::call(cursus_event_store_stream_version, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"),
                 &v);
    return v;
  }
  /// Saves `state` as the aggregate's snapshot at `version` (at most its
  /// current version, else ConflictError snapshot_version_exceeds_stream).
  void save_snapshot(const std::string &topic, const std::string &key, uint64_t version, const std::string &state) {
    detail::call(cursus_event_store_save_snapshot, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"),
                 version, detail::text(state, "state"));
  }
  /// The aggregate's latest snapshot, if any.
  std::optional<Snapshot> read_snapshot(const std::string &topic, const std::string &key) {
    cursus_snapshot_t *s = nullptr;
    detail::call(cursus_event_store_read_snapshot, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"), &s);
    return detail::snapshot(s);
  }

  /// Aggregate `key`'s stream from `from_version` (1: the start), page by
  /// page: the first page carries the latest snapshot at or after
  /// `from_version`, and the events after it.
  EventCursor read_stream(const std::string &topic, const std::string &key, uint64_t from_version = 1,
                          PageLimits limits = {}) {
    cursus_event_cursor_t *c = nullptr;
    detail::call(cursus_event_cursor_stream, detail::text(topic, "topic"), detail::text(key, "key"), from_version,
                 limits.max_records, limits.max_bytes, &c);
    return EventCursor(h_.get(), c, topic);
  }
  /// Aggregate `key`'s original events (no snapshot) from `from_version` to
  /// `to_version` (none: its current version); each page has its completeness.
  EventCursor history(const std::string &topic, const std::string &key, uint64_t from_version = 1,
                      std::optional<uint64_t> to_version = std::nullopt, PageLimits limits = {}) {
    cursus_event_cursor_t *c = nullptr;
    detail::call(cursus_event_cursor_history, detail::text(topic, "topic"), detail::text(key, "key"), from_version,
                 to_version.value_or(0), limits.max_records, limits.max_bytes, &c);
    return EventCursor(h_.get(), c, topic);
  }
  /// The committed records of any topic's partition from `from_offset` up
  /// to `to_offset` (exclusive; none: the readable end).
  EventCursor browse(const std::string &topic, uint32_t partition, uint64_t from_offset = 0,
                     std::optional<uint64_t> to_offset = std::nullopt, PageLimits limits = {}) {
    cursus_event_cursor_t *c = nullptr;
    detail::call(cursus_event_cursor_browse, detail::text(topic, "topic"), partition, from_offset,
                 to_offset ? static_cast<int64_t>(*to_offset) : int64_t{-1}, limits.max_records, limits.max_bytes,
                 &c);
    return EventCursor(h_.get(), c, topic);
  }

  /// Closes the client (idempotent); later calls throw ClosedError.
  void close() { detail::call(cursus_event_store_close, h_.get()); }
  /// The C handle (owned by this EventStore).
  cursus_event_store_t *c_handle() const noexcept { return h_.get(); }

 private:
  detail::Handle<cursus_event_store_t, cursus_event_store_destroy> h_;
};

/// The aggregate cycle for an application state `State`: load = the latest
/// snapshot (deserialised) plus the events after it folded in; append =
/// the next version, folded in too; every `snapshot_every` appends the
/// state is serialised and saved as the snapshot.
///
///     auto account = cursus::Aggregate<long>::load(store, "accounts", "acct-42", 0L,
///         [](long &balance, const cursus::StoredEvent &e) { balance += std::stol(e.payload); },
///         [](const std::string &s) { return std::stol(s); },
///         [](const long &balance) { return std::to_string(balance); });
///     if (account.state() >= 10) account.append({"Withdrawn", "-10"});
///
/// A lost race throws VersionConflictError: load again and decide again.
/// The EventStore must outlive the Aggregate; one Aggregate is used by one
/// thread at a time.
template <typename State>
class Aggregate {
 public:
  /// Folds one event into the state.
  using Fold = std::function<void(State &, const StoredEvent &)>;
  /// A snapshot's state text to a State.
  using Deserialise = std::function<State(const std::string &)>;
  /// A State to snapshot text.
  using Serialise = std::function<std::string(const State &)>;

  /// Loads aggregate `key`: `initial` (or the latest snapshot, through
  /// `deserialise`) with every later event folded in. `snapshot_every` (0:
  /// never) is how many appends make a snapshot due.
  static Aggregate load(EventStore &store, const std::string &topic, const std::string &key, State initial, Fold fold,
                        Deserialise deserialise, Serialise serialise, uint64_t snapshot_every = 500) {
    cursus_aggregate_t *a = nullptr;
    detail::call(cursus_event_store_load_aggregate, store.c_handle(), detail::text(topic, "topic"),
                 detail::text(key, "key"), snapshot_every, &a);
    detail::Handle<cursus_aggregate_t, cursus_aggregate_destroy> h(a);
    cursus_event_page_t *p = nullptr;
    detail::call(cursus_aggregate_loaded, a, &p);
    EventPage loaded = detail::event_page(p, topic);
    State state = loaded.snapshot ? deserialise(loaded.snapshot->state) : std::move(initial);
    for (const StoredEvent &e : loaded.events) fold(state, e);
    return Aggregate(store.c_handle(), std::move(h), topic, key, std::move(fold), std::move(serialise),
                     std::move(state), std::move(loaded.snapshot), loaded.events.size());
  }

  /// The state: loaded, plus every event appended since.
  const State &state() const noexcept { return state_; }
  /// The version loaded or last appended.
  uint64_t version() const noexcept { return cursus_aggregate_version(h_.get()); }
  /// The snapshot loading started from, if any.
  const std::optional<Snapshot> &loaded_snapshot() const noexcept { return loaded_snapshot_; }
  /// How many events loading folded in (those after the snapshot).
  size_t loaded_events() const noexcept { return loaded_events_; }
  /// The aggregate key.
  const std::string &key() const noexcept { return key_; }

  /// Appends `event` at the next version, folds it into the state, and
  /// saves a snapshot when one is due. Returns the event's version. Throws
  /// VersionConflictError when another writer appended first (the state
  /// and version are then unchanged). The folded event has the version,
  /// key, type, payload, metadata and schema version; its offset,
  /// partition and timestamp are not known (0).
  uint64_t append(const Event &event) {
    uint64_t v = 0;
    detail::es_call(cursus_event_store_aggregate_append, store_, h_.get(), detail::text(event.event_type, "event type"),
                    detail::text(event.payload, "payload"),
                    event.metadata.empty() ? nullptr : detail::text(event.metadata, "metadata"), event.schema_version,
                    &v);
    StoredEvent stored;
    stored.topic = topic_;
    stored.key = key_;
    stored.version = v;
    stored.event_type = event.event_type;
    stored.schema_version = event.schema_version ? event.schema_version : 1;
    stored.metadata = event.metadata;
    stored.payload = event.payload;
    fold_(state_, stored);
    if (snapshot_due()) save_snapshot();
    return v;
  }
  /// True when `snapshot_every` events were appended since the last snapshot.
  bool snapshot_due() const noexcept { return cursus_aggregate_snapshot_due(h_.get()); }
  /// Saves the state (serialised) as the snapshot at the current version.
  void save_snapshot() {
    std::string text = serialise_(state_);
    detail::call(cursus_event_store_aggregate_save_snapshot, store_, h_.get(), detail::text(text, "snapshot state"));
  }

 private:
  Aggregate(cursus_event_store_t *store, detail::Handle<cursus_aggregate_t, cursus_aggregate_destroy> h,
            std::string topic, std::string key, Fold fold, Serialise serialise, State state,
            std::optional<Snapshot> loaded_snapshot, size_t loaded_events)
      : store_(store),
        h_(std::move(h)),
        topic_(std::move(topic)),
        key_(std::move(key)),
        fold_(std::move(fold)),
        serialise_(std::move(serialise)),
        state_(std::move(state)),
        loaded_snapshot_(std::move(loaded_snapshot)),
        loaded_events_(loaded_events) {}
  cursus_event_store_t *store_;
  detail::Handle<cursus_aggregate_t, cursus_aggregate_destroy> h_;
  std::string topic_, key_;
  Fold fold_;
  Serialise serialise_;
  State state_;
  std::optional<Snapshot> loaded_snapshot_;
  size_t loaded_events_;
};

}  // namespace cursus

#endif  // CURSUS_EVENTSTORE_HPP
