// cursus/eventstore.hpp: EventStore, paged reads (EventCursor) and the Aggregate<State> helper (part of cursus.hpp; include that).
#ifndef CURSUS_EVENTSTORE_HPP
#define CURSUS_EVENTSTORE_HPP

#include "types.hpp"

#include <cstdlib>
#include <iterator>

namespace cursus {

// Snapshot (like Appended) is generated: cursus/results.hpp.

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

/// What the broker proved about an aggregate's retained events on an
/// aggregate replay topic (EventStore::replay_proof; docs/aggregate-replay.md).
struct ReplayProof {
  /// "complete", "not_found", "retention_gap", "sequence_gap",
  /// "identity_conflict" or "proof_unavailable".
  std::string status;
  std::string diagnostic;             ///< Why the proof is not complete (empty when it is).
  uint32_t partition = 0;             ///< The aggregate's partition.
  uint64_t event_count = 0;           ///< The events found.
  uint64_t earliest_sequence = 0;     ///< The lowest retained sequence (0 when none).
  uint64_t latest_sequence = 0;       ///< The highest retained sequence (0 when none).
  uint64_t first_offset = 0;          ///< The offset of the first retained event.
  uint64_t last_offset = 0;           ///< The offset of the last retained event.
  std::string first_event_id;         ///< The first event's id.
  std::string last_event_id;          ///< The last event's id.
  bool sequence_complete = false;     ///< Sequences increase by exactly one.
  bool retention_complete = false;    ///< The retained events start at sequence 1.
  uint64_t hwm = 0;                   ///< The committed offset the proof covers.
  /// True when every retained event from sequence 1 on was verified.
  bool complete() const noexcept { return status == "complete"; }
};

/// One event of a range read.
struct RangeEvent {
  uint64_t offset = 0;    ///< Its offset in the partition.
  uint64_t sequence = 0;  ///< Its sequence (aggregate version).
  std::string event_id;   ///< Its event id.
  std::string event_type; ///< Its event type.
  std::string payload;    ///< Its payload text.
};

/// A range read: the events under the (complete) proof they were read with.
struct EventRange {
  ReplayProof proof;              ///< The proof the range was read under.
  std::vector<RangeEvent> events; ///< The events, in sequence order.
};

/// A replay proof (or range read) that failed because the proof is not
/// complete: code() is `aggregate_proof_<status>` (or
/// `aggregate_range_<status>`), and proof() is what the broker proved.
/// status() and error_class() are as reported (e.g. not_found for
/// aggregate_proof_not_found, internal for the others); catch this type,
/// or cursus::Error and call replay_proof_of().
class ReplayProofError : public Error {
 public:
  /// The error `e` with the proof it carried.
  ReplayProofError(const Error &e, ReplayProof proof)
      : Error(e.status(), e.what(), e.code(), e.error_class(), e.kind(), e.retryable(), e.message(), e.fields()),
        proof_(std::move(proof)) {}
  /// The proof the failure carried.
  const ReplayProof &proof() const noexcept { return proof_; }

 private:
  ReplayProof proof_;
};

/// The proof a failed replay proof or range read carried, or none (any
/// other error).
inline std::optional<ReplayProof> replay_proof_of(const Error &e) {
  if (auto *p = dynamic_cast<const ReplayProofError *>(&e)) return p->proof();
  return std::nullopt;
}

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

/// A ReplayProof from its handle (consumed).
inline ReplayProof replay_proof(cursus_replay_proof_t *h) {
  Handle<cursus_replay_proof_t, cursus_replay_proof_destroy> owned(h);
  ReplayProof p;
  p.status = str(cursus_replay_proof_status(h));
  p.diagnostic = str(cursus_replay_proof_diagnostic(h));
  p.partition = cursus_replay_proof_partition(h);
  p.event_count = cursus_replay_proof_event_count(h);
  p.earliest_sequence = cursus_replay_proof_earliest_sequence(h);
  p.latest_sequence = cursus_replay_proof_latest_sequence(h);
  p.first_offset = cursus_replay_proof_first_offset(h);
  p.last_offset = cursus_replay_proof_last_offset(h);
  p.first_event_id = str(cursus_replay_proof_first_event_id(h));
  p.last_event_id = str(cursus_replay_proof_last_event_id(h));
  p.sequence_complete = cursus_replay_proof_sequence_complete(h);
  p.retention_complete = cursus_replay_proof_retention_complete(h);
  p.hwm = cursus_replay_proof_hwm(h);
  return p;
}

/// Like call(), but a failure that carries a proof throws ReplayProofError.
template <typename F, typename... A>
inline void proof_call(F f, A... args) {
  cursus_error_t *err = nullptr;
  cursus_status_t s = f(args..., &err);
  if (s == CURSUS_OK) return;
  std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
  cursus_replay_proof_t *p = nullptr;
  if (cursus_replay_proof_from_error(err, &p, nullptr) != CURSUS_OK || !p) throw_from(s, err);
  ReplayProof proof = replay_proof(p);
  try {
    throw_from(s, err);
  } catch (const Error &e) {
    throw ReplayProofError(e, std::move(proof));
  }
}

/// A snapshot from its handle (consumed; none for NULL).
inline std::optional<Snapshot> snapshot(cursus_snapshot_t *h) {
  Handle<cursus_snapshot_t, cursus_snapshot_destroy> owned(h);
  if (!h) return std::nullopt;
  return read_snapshot(h);
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
  /// expected()). The event carries `event.event_id`, or a generated id
  /// when it is empty. On an aggregate replay topic, repeating an append
  /// with the same id, version and payload returns the original Appended
  /// (an append whose outcome is unknown is retried so); the same version
  /// or id with anything else throws ConflictError
  /// "aggregate_identity_conflict".
  Appended append(const std::string &topic, const std::string &key, uint64_t expected_version, const Event &event) {
    cursus_appended_t *a = nullptr;
    if (event.event_id.empty()) {
      detail::es_call(cursus_event_store_append, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"),
                      expected_version, detail::text(event.event_type, "event type"),
                      detail::text(event.payload, "payload"),
                      event.metadata.empty() ? nullptr : detail::text(event.metadata, "metadata"),
                      event.schema_version, &a);
    } else {
      auto b = detail::event_builder(event);
      detail::es_call(cursus_event_store_append_event, h_.get(), detail::text(topic, "topic"),
                      detail::text(key, "key"), expected_version, b.get(), &a);
    }
    return detail::appended(a);
  }
  /// Appends `event` with `event_id` as its id (as append(topic, key,
  /// expected_version, event) with event.event_id = event_id; an empty or
  /// whitespace-holding id throws InvalidArgumentError, the library's rule).
  Appended append(const std::string &topic, const std::string &key, uint64_t expected_version, Event event,
                  std::string event_id) {
    event.event_id = std::move(event_id);
    auto b = detail::event_builder(event);
    if (event.event_id.empty())  // the library refuses it, as in every language
      detail::call(cursus_event_builder_set_event_id, b.get(), "");
    cursus_appended_t *a = nullptr;
    detail::es_call(cursus_event_store_append_event, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"),
                    expected_version, b.get(), &a);
    return detail::appended(a);
  }

  /// Proves that aggregate `match_id`'s retained events on an aggregate
  /// replay topic are exactly sequences 1..last with verified digests and
  /// unique ids (and, when `expected_last_sequence` is given, that last is
  /// it; 0 throws InvalidArgumentError, the library's rule in every
  /// language). Returns the complete proof; a proof that is not complete throws
  /// ReplayProofError (code `aggregate_proof_<status>`, proof() typed). A
  /// topic without aggregate_replay throws "aggregate_replay_not_enabled".
  ReplayProof replay_proof(const std::string &topic, const std::string &match_id,
                           std::optional<uint64_t> expected_last_sequence = std::nullopt) {
    // -1: no expectation; a value past INT64_MAX stays an error (negative).
    int64_t expected = expected_last_sequence ? static_cast<int64_t>(*expected_last_sequence) : -1;
    if (expected_last_sequence && expected == -1) expected = -2;
    cursus_replay_proof_t *p = nullptr;
    detail::proof_call(cursus_event_store_replay_proof, h_.get(), detail::text(topic, "topic"),
                       detail::text(match_id, "match id"), expected, &p);
    return detail::replay_proof(p);
  }

  /// The events of aggregate `match_id` with sequences `from_sequence` to
  /// `to_sequence` (at most `max_records`; 0: the broker's 1,000), read
  /// under a complete proof. An incomplete proof throws ReplayProofError
  /// (code `aggregate_range_<status>`); fewer events than asked for (e.g.
  /// `to_sequence` past the last) throw InternalError
  /// "aggregate_range_incomplete".
  EventRange event_range(const std::string &topic, const std::string &match_id, uint64_t from_sequence,
                         uint64_t to_sequence, uint32_t max_records = 0) {
    cursus_event_range_t *r = nullptr;
    detail::proof_call(cursus_event_store_event_range, h_.get(), detail::text(topic, "topic"),
                       detail::text(match_id, "match id"), from_sequence, to_sequence, max_records, &r);
    detail::Handle<cursus_event_range_t, cursus_event_range_destroy> owned(r);
    cursus_replay_proof_t *p = nullptr;
    detail::call(cursus_event_range_proof, r, &p);
    EventRange out;
    out.proof = detail::replay_proof(p);
    size_t n = cursus_event_range_count(r);
    out.events.reserve(n);
    for (size_t i = 0; i < n; i++) {
      RangeEvent ev;
      ev.offset = static_cast<uint64_t>(cursus_event_range_offset(r, i));
      ev.sequence = cursus_event_range_sequence(r, i);
      ev.event_id = detail::str(cursus_event_range_event_id(r, i));
      ev.event_type = detail::str(cursus_event_range_event_type(r, i));
      ev.payload = detail::str(cursus_event_range_payload(r, i));
      out.events.push_back(std::move(ev));
    }
    return out;
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

  /// Appends `event` (with `event.event_id` as its id; empty: a generated
  /// one) at the next version and returns it as stored: its version, offset
  /// and partition are the broker's (timestamp 0: the append's reply does
  /// not carry it). Only then is it folded into the state, so a failed
  /// append leaves state and version unchanged: VersionConflictError when
  /// another writer appended first (load again and decide again),
  /// InvalidArgumentError for an id holding whitespace. When a snapshot is
  /// due the state is then serialised and saved; a snapshot that fails
  /// (the save, or `serialise` throwing) never fails the append, which is
  /// durable: it is reported through the library log at warn and stays due,
  /// so the next append tries again.
  StoredEvent append(const Event &event) {
    cursus_event_page_t *p = nullptr;
    detail::es_call(cursus_event_store_aggregate_append, store_, h_.get(), detail::text(event.event_type, "event type"),
                    detail::text(event.payload, "payload"),
                    event.metadata.empty() ? nullptr : detail::text(event.metadata, "metadata"), event.schema_version,
                    event.event_id.empty() ? nullptr : detail::text(event.event_id, "event id"), &p);
    StoredEvent stored = std::move(detail::event_page(p, topic_).events.at(0));
    fold_(state_, stored);
    if (serialise_ && snapshot_due()) auto_snapshot();
    return stored;
  }
  /// True when `snapshot_every` events were appended since the last snapshot.
  bool snapshot_due() const noexcept { return cursus_aggregate_snapshot_due(h_.get()); }
  /// Saves the state (serialised) as the snapshot at the current version
  /// (an explicit save: its failure throws).
  void save_snapshot() {
    std::string text = serialise_(state_);
    detail::call(cursus_event_store_aggregate_save_snapshot, store_, h_.get(), detail::text(text, "snapshot state"));
  }

 private:
  // The automatic snapshot: every failure goes to the library log (warn).
  void auto_snapshot() noexcept {
    try {
      std::string text = serialise_(state_);
      bool saved = false;
      detail::call(cursus_event_store_aggregate_auto_snapshot, store_, h_.get(), detail::text(text, "snapshot state"),
                   &saved);
    } catch (const std::exception &e) {
      cursus_aggregate_snapshot_failed(h_.get(), e.what(), nullptr);
    } catch (...) {
      cursus_aggregate_snapshot_failed(h_.get(), "serialise threw", nullptr);
    }
  }

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
