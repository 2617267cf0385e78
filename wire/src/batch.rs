//! CBV2 record batches and records (§6).
//!
//! Decoding borrows from the input: a record's payload, key and control bytes
//! are slices of the frame buffer, not copies.

use super::buf::{put_bytes, put_str, Reader};
use super::error::{WireError, WireResult};
use bytes::{BufMut, Bytes, BytesMut};
use std::fmt;

/// Batch magic, ASCII `CBV2`.
pub const BATCH_MAGIC: u32 = 0x4342_5632;
/// Batch version.
pub const BATCH_VERSION: u16 = 2;
/// Maximum records in one batch.
pub const MAX_BATCH_RECORDS: usize = 100_000;

const FLAG_IDEMPOTENT: u16 = 0x0001;

/// Defines a string-valued enum whose wire form is one of a fixed set.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The wire text.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            /// Parses the exact wire text.
            pub fn parse(text: &str) -> WireResult<Self> {
                match text {
                    $($text => Ok($name::$variant),)+
                    other => Err(WireError::InvalidEnumValue { field: $field, value: other.to_owned() }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum! {
    /// A batch's acknowledgement mode (§6.1), kept in its exact wire spelling.
    Acks, "acks" {
        /// `""`: the broker default (acks=1).
        #[default]
        Default => "",
        /// `0`: no acknowledgement and no response frame.
        None => "0",
        /// `1`: durable leader append.
        Leader => "1",
        /// `-1`: all in-sync replicas.
        MinusOne => "-1",
        /// `all`: all in-sync replicas.
        All => "all",
    }
}

impl Acks {
    /// Parses the batch field, naming `acks` in the error (the Go codec's
    /// `none` is rejected: never send it).
    pub fn from_wire(text: &str) -> WireResult<Self> {
        Acks::parse(text).map_err(|_| WireError::InvalidAcks(text.to_owned()))
    }
}

string_enum! {
    /// Transaction state of a record (§6.6).
    TransactionState, "transaction_state" {
        /// Not transactional.
        #[default]
        None => "",
        /// Staged in an open transaction.
        Open => "open",
        /// Committed.
        Committed => "committed",
        /// Aborted.
        Aborted => "aborted",
    }
}

string_enum! {
    /// Transaction marker of a control record (§6.6).
    TransactionMarker, "transaction_marker" {
        /// Not a marker.
        #[default]
        None => "",
        /// Commit marker.
        Commit => "commit",
        /// Abort marker.
        Abort => "abort",
    }
}

string_enum! {
    /// Control batch type (§6.6).
    ControlBatchType, "control_batch_type" {
        /// Not a control record.
        #[default]
        None => "",
        /// A transaction control record.
        Transaction => "transaction",
    }
}

/// Record encoding version (§6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordVersion {
    /// Presence bits 0-14; what SDK encoders write.
    V2 = 2,
    /// Presence bits 0-16; what the broker writes.
    V3 = 3,
}

impl RecordVersion {
    /// Presence bits this version knows.
    pub const fn presence_mask(self) -> u64 {
        match self {
            RecordVersion::V2 => 0x7FFF,
            RecordVersion::V3 => 0x1FFFF,
        }
    }

    fn from_wire(v: u16) -> WireResult<Self> {
        match v {
            2 => Ok(RecordVersion::V2),
            3 => Ok(RecordVersion::V3),
            other => Err(WireError::RecordVersion(other)),
        }
    }
}

/// How a batch chooses each record's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordVersionPolicy {
    /// The client engine's rule: version 2, or 3 when the record carries a
    /// version-3-only field (`event_id`, `payload_digest`).
    Minimal,
    /// Always this version (the reference broker writes 3).
    Fixed(RecordVersion),
}

impl RecordVersionPolicy {
    fn version_for(self, record: &RecordRef<'_>) -> RecordVersion {
        match self {
            RecordVersionPolicy::Minimal => record.minimal_version(),
            RecordVersionPolicy::Fixed(v) => v,
        }
    }
}

/// Presence bit numbers (§6.3).
mod bit {
    pub const TIMESTAMP: u64 = 1 << 0;
    pub const PRODUCER: u64 = 1 << 1;
    pub const KEY: u64 = 1 << 2;
    pub const EVENT_TYPE: u64 = 1 << 3;
    pub const SCHEMA_VERSION: u64 = 1 << 4;
    pub const AGGREGATE_VERSION: u64 = 1 << 5;
    pub const METADATA: u64 = 1 << 6;
    pub const TRANSACTIONAL_ID: u64 = 1 << 7;
    pub const TRANSACTION_STATE: u64 = 1 << 8;
    pub const TRANSACTION_MARKER: u64 = 1 << 9;
    pub const CONTROL_TYPE: u64 = 1 << 10;
    pub const CONTROL_VERSION: u64 = 1 << 11;
    pub const CONTROL_EPOCH: u64 = 1 << 12;
    pub const CONTROL_KEY: u64 = 1 << 13;
    pub const CONTROL_VALUE: u64 = 1 << 14;
    pub const EVENT_ID: u64 = 1 << 15;
    pub const PAYLOAD_DIGEST: u64 = 1 << 16;
}

/// One record. Optional fields are "absent" when zero or empty (§6.3), except
/// the control key and value, which are absent only when `None`.
///
/// `payload` and `key` are `str` on the wire; this codec carries them as raw
/// bytes so binary payloads survive unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// Topic (a batch encoder writes the batch's topic instead).
    pub topic: String,
    /// Partition (a batch encoder writes the batch's partition instead).
    pub partition: i32,
    /// Offset assigned by the broker.
    pub offset: u64,
    /// The record's value.
    pub payload: Bytes,
    /// Milliseconds since the epoch; 0 means unset.
    pub timestamp: i64,
    /// Producer id (idempotent and transactional producers).
    pub producer_id: String,
    /// Producer sequence number.
    pub seq_num: u64,
    /// Producer epoch.
    pub epoch: i64,
    /// Partitioning key; empty means none.
    pub key: Bytes,
    /// Event type (event sourcing).
    pub event_type: String,
    /// Event schema version.
    pub schema_version: u32,
    /// Aggregate version (event sourcing).
    pub aggregate_version: u64,
    /// Event metadata (usually JSON).
    pub metadata: String,
    /// Transactional id.
    pub transactional_id: String,
    /// Transaction state.
    pub transaction_state: TransactionState,
    /// Transaction marker (control records).
    pub transaction_marker: TransactionMarker,
    /// Control batch type.
    pub control_batch_type: ControlBatchType,
    /// Control batch version (2 for Cursus v2 transaction control records).
    pub control_batch_version: i16,
    /// Control batch coordinator epoch.
    pub control_batch_coordinator_epoch: i64,
    /// Control record key bytes.
    pub control_batch_key: Option<Bytes>,
    /// Control record value bytes.
    pub control_batch_value: Option<Bytes>,
    /// Event id (version 3 only).
    pub event_id: String,
    /// Payload digest (version 3 only).
    pub payload_digest: String,
}

impl Record {
    /// A record carrying `payload` and nothing else.
    pub fn new(payload: impl Into<Bytes>) -> Self {
        Record {
            payload: payload.into(),
            ..Default::default()
        }
    }

    /// The record's fields borrowed, as the encoder reads them.
    pub fn borrowed(&self) -> RecordRef<'_> {
        RecordRef {
            offset: self.offset,
            payload: &self.payload,
            timestamp: self.timestamp,
            producer_id: &self.producer_id,
            seq_num: self.seq_num,
            epoch: self.epoch,
            key: &self.key,
            event_type: &self.event_type,
            schema_version: self.schema_version,
            aggregate_version: self.aggregate_version,
            metadata: &self.metadata,
            transactional_id: &self.transactional_id,
            transaction_state: self.transaction_state,
            transaction_marker: self.transaction_marker,
            control_batch_type: self.control_batch_type,
            control_batch_version: self.control_batch_version,
            control_batch_coordinator_epoch: self.control_batch_coordinator_epoch,
            control_batch_key: self.control_batch_key.as_deref(),
            control_batch_value: self.control_batch_value.as_deref(),
            event_id: &self.event_id,
            payload_digest: &self.payload_digest,
        }
    }

    /// The presence bitmap this record encodes with.
    pub fn presence(&self) -> u64 {
        self.borrowed().presence()
    }

    /// Version 2 unless a version-3-only field is set (the project's rule).
    pub fn minimal_version(&self) -> RecordVersion {
        self.borrowed().minimal_version()
    }

    /// Appends the record (without a length prefix) using its own topic and partition.
    pub fn encode(&self, version: RecordVersion, dst: &mut BytesMut) -> WireResult<()> {
        self.borrowed()
            .encode_routed(&self.topic, self.partition, version, dst)
    }

    /// The record's encoding as a new buffer.
    pub fn to_bytes(&self, version: RecordVersion) -> WireResult<Bytes> {
        let mut dst = BytesMut::with_capacity(self.borrowed().encoded_len_hint(&self.topic));
        self.encode(version, &mut dst)?;
        Ok(dst.freeze())
    }

    /// Decodes one record occupying all of `buf`.
    pub fn decode(buf: Bytes) -> WireResult<Record> {
        let mut r = Reader::new(buf);
        let version = RecordVersion::from_wire(r.u16("record version")?)?;
        let presence = r.u64("presence")?;
        let unknown = presence & !version.presence_mask();
        if unknown != 0 {
            return Err(WireError::UnknownPresenceBits {
                version: version as u16,
                bits: unknown,
            });
        }
        let topic = r.string("record topic")?;
        Self::decode_body(&mut r, topic, presence)
    }

    /// Decodes a record inside a batch, checking its routing against the
    /// batch's without allocating the topic twice.
    fn decode_in_batch(buf: Bytes, topic: &str, partition: i32) -> WireResult<Record> {
        let mut r = Reader::new(buf);
        let version = RecordVersion::from_wire(r.u16("record version")?)?;
        let presence = r.u64("presence")?;
        let unknown = presence & !version.presence_mask();
        if unknown != 0 {
            return Err(WireError::UnknownPresenceBits {
                version: version as u16,
                bits: unknown,
            });
        }
        let record_topic = r.string_unless_eq(topic, "record topic")?;
        let record = Self::decode_body(&mut r, String::new(), presence)?;
        if record_topic.is_some() || record.partition != partition {
            return Err(WireError::RoutingConflict {
                batch_topic: topic.to_owned(),
                batch_partition: partition,
                record_topic: record_topic.unwrap_or_else(|| topic.to_owned()),
                record_partition: record.partition,
            });
        }
        Ok(Record {
            topic: topic.to_owned(),
            ..record
        })
    }

    fn decode_body(r: &mut Reader, topic: String, presence: u64) -> WireResult<Record> {
        let has = |b: u64| presence & b != 0;
        let mut rec = Record {
            topic,
            partition: r.i32("record partition")?,
            offset: r.u64("record offset")?,
            payload: r.bytes("payload")?,
            ..Default::default()
        };
        if has(bit::TIMESTAMP) {
            rec.timestamp = r.i64("timestamp")?;
        }
        if has(bit::PRODUCER) {
            rec.producer_id = r.string("producer_id")?;
            rec.seq_num = r.u64("seq_num")?;
            rec.epoch = r.i64("epoch")?;
        }
        if has(bit::KEY) {
            rec.key = r.bytes("key")?;
        }
        if has(bit::EVENT_TYPE) {
            rec.event_type = r.string("event_type")?;
        }
        if has(bit::SCHEMA_VERSION) {
            rec.schema_version = r.u32("schema_version")?;
        }
        if has(bit::AGGREGATE_VERSION) {
            rec.aggregate_version = r.u64("aggregate_version")?;
        }
        if has(bit::METADATA) {
            rec.metadata = r.string("metadata")?;
        }
        if has(bit::TRANSACTIONAL_ID) {
            rec.transactional_id = r.string("transactional_id")?;
        }
        if has(bit::TRANSACTION_STATE) {
            rec.transaction_state = TransactionState::parse(&r.string("transaction_state")?)?;
        }
        if has(bit::TRANSACTION_MARKER) {
            rec.transaction_marker = TransactionMarker::parse(&r.string("transaction_marker")?)?;
        }
        if has(bit::CONTROL_TYPE) {
            rec.control_batch_type = ControlBatchType::parse(&r.string("control_batch_type")?)?;
        }
        if has(bit::CONTROL_VERSION) {
            rec.control_batch_version = r.i16("control_batch_version")?;
        }
        if has(bit::CONTROL_EPOCH) {
            rec.control_batch_coordinator_epoch = r.i64("control_batch_coordinator_epoch")?;
        }
        if has(bit::CONTROL_KEY) {
            rec.control_batch_key = Some(r.bytes("control_batch_key")?);
        }
        if has(bit::CONTROL_VALUE) {
            rec.control_batch_value = Some(r.bytes("control_batch_value")?);
        }
        if has(bit::EVENT_ID) {
            rec.event_id = r.string("event_id")?;
        }
        if has(bit::PAYLOAD_DIGEST) {
            rec.payload_digest = r.string("payload_digest")?;
        }
        r.finish("record")?;
        Ok(rec)
    }
}

/// A record's fields borrowed from wherever the caller keeps them: what the
/// encoder reads. Building one allocates nothing, so a producer encodes its
/// queued records straight into the batch buffer (no `Record` with its own
/// `String`s per record). Same absence rules as [`Record`]; the topic and
/// partition come from the batch (or [`RecordRef::encode_routed`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Offset (the broker assigns it; producers leave 0).
    pub offset: u64,
    /// The record's value.
    pub payload: &'a [u8],
    /// Milliseconds since the epoch; 0 means unset.
    pub timestamp: i64,
    /// Producer id (idempotent and transactional producers).
    pub producer_id: &'a str,
    /// Producer sequence number.
    pub seq_num: u64,
    /// Producer epoch.
    pub epoch: i64,
    /// Partitioning key; empty means none.
    pub key: &'a [u8],
    /// Event type (event sourcing).
    pub event_type: &'a str,
    /// Event schema version.
    pub schema_version: u32,
    /// Aggregate version (event sourcing).
    pub aggregate_version: u64,
    /// Event metadata.
    pub metadata: &'a str,
    /// Transactional id.
    pub transactional_id: &'a str,
    /// Transaction state.
    pub transaction_state: TransactionState,
    /// Transaction marker (control records).
    pub transaction_marker: TransactionMarker,
    /// Control batch type.
    pub control_batch_type: ControlBatchType,
    /// Control batch version.
    pub control_batch_version: i16,
    /// Control batch coordinator epoch.
    pub control_batch_coordinator_epoch: i64,
    /// Control record key bytes.
    pub control_batch_key: Option<&'a [u8]>,
    /// Control record value bytes.
    pub control_batch_value: Option<&'a [u8]>,
    /// Event id (version 3 only).
    pub event_id: &'a str,
    /// Payload digest (version 3 only).
    pub payload_digest: &'a str,
}

impl RecordRef<'_> {
    /// The presence bitmap this record encodes with.
    pub fn presence(&self) -> u64 {
        let mut p = 0;
        let mut set = |cond: bool, b: u64| {
            if cond {
                p |= b
            }
        };
        set(self.timestamp != 0, bit::TIMESTAMP);
        set(
            !self.producer_id.is_empty() || self.seq_num != 0 || self.epoch != 0,
            bit::PRODUCER,
        );
        set(!self.key.is_empty(), bit::KEY);
        set(!self.event_type.is_empty(), bit::EVENT_TYPE);
        set(self.schema_version != 0, bit::SCHEMA_VERSION);
        set(self.aggregate_version != 0, bit::AGGREGATE_VERSION);
        set(!self.metadata.is_empty(), bit::METADATA);
        set(!self.transactional_id.is_empty(), bit::TRANSACTIONAL_ID);
        set(
            self.transaction_state != TransactionState::None,
            bit::TRANSACTION_STATE,
        );
        set(
            self.transaction_marker != TransactionMarker::None,
            bit::TRANSACTION_MARKER,
        );
        set(
            self.control_batch_type != ControlBatchType::None,
            bit::CONTROL_TYPE,
        );
        set(self.control_batch_version != 0, bit::CONTROL_VERSION);
        set(
            self.control_batch_coordinator_epoch != 0,
            bit::CONTROL_EPOCH,
        );
        set(self.control_batch_key.is_some(), bit::CONTROL_KEY);
        set(self.control_batch_value.is_some(), bit::CONTROL_VALUE);
        set(!self.event_id.is_empty(), bit::EVENT_ID);
        set(!self.payload_digest.is_empty(), bit::PAYLOAD_DIGEST);
        p
    }

    /// Version 2 unless a version-3-only field is set (the project's rule).
    pub fn minimal_version(&self) -> RecordVersion {
        if self.event_id.is_empty() && self.payload_digest.is_empty() {
            RecordVersion::V2
        } else {
            RecordVersion::V3
        }
    }

    /// A size hint for the encoding with `topic` (exact for the fields a
    /// producer sets; the encoder grows the buffer for the rest).
    fn encoded_len_hint(&self, topic: &str) -> usize {
        64 + topic.len() + self.payload.len() + self.key.len() + self.producer_id.len()
    }

    /// Appends the record (without a length prefix) under `topic` and `partition`.
    pub fn encode_routed(
        &self,
        topic: &str,
        partition: i32,
        version: RecordVersion,
        dst: &mut BytesMut,
    ) -> WireResult<()> {
        let presence = self.presence();
        if version == RecordVersion::V2 {
            if presence & bit::EVENT_ID != 0 {
                return Err(WireError::NeedsRecordVersion3("event_id"));
            }
            if presence & bit::PAYLOAD_DIGEST != 0 {
                return Err(WireError::NeedsRecordVersion3("payload_digest"));
            }
        }
        dst.reserve(self.encoded_len_hint(topic));
        dst.put_u16(version as u16);
        dst.put_u64(presence);
        put_str(dst, topic, "topic")?;
        dst.put_i32(partition);
        dst.put_u64(self.offset);
        put_bytes(dst, self.payload, "payload")?;
        if presence & bit::TIMESTAMP != 0 {
            dst.put_i64(self.timestamp);
        }
        if presence & bit::PRODUCER != 0 {
            put_str(dst, self.producer_id, "producer_id")?;
            dst.put_u64(self.seq_num);
            dst.put_i64(self.epoch);
        }
        if presence & bit::KEY != 0 {
            put_bytes(dst, self.key, "key")?;
        }
        if presence & bit::EVENT_TYPE != 0 {
            put_str(dst, self.event_type, "event_type")?;
        }
        if presence & bit::SCHEMA_VERSION != 0 {
            dst.put_u32(self.schema_version);
        }
        if presence & bit::AGGREGATE_VERSION != 0 {
            dst.put_u64(self.aggregate_version);
        }
        for (b, value, what) in [
            (bit::METADATA, self.metadata, "metadata"),
            (
                bit::TRANSACTIONAL_ID,
                self.transactional_id,
                "transactional_id",
            ),
            (
                bit::TRANSACTION_STATE,
                self.transaction_state.as_str(),
                "transaction_state",
            ),
            (
                bit::TRANSACTION_MARKER,
                self.transaction_marker.as_str(),
                "transaction_marker",
            ),
            (
                bit::CONTROL_TYPE,
                self.control_batch_type.as_str(),
                "control_batch_type",
            ),
        ] {
            if presence & b != 0 {
                put_str(dst, value, what)?;
            }
        }
        if presence & bit::CONTROL_VERSION != 0 {
            dst.put_i16(self.control_batch_version);
        }
        if presence & bit::CONTROL_EPOCH != 0 {
            dst.put_i64(self.control_batch_coordinator_epoch);
        }
        if let Some(k) = self.control_batch_key {
            put_bytes(dst, k, "control_batch_key")?;
        }
        if let Some(v) = self.control_batch_value {
            put_bytes(dst, v, "control_batch_value")?;
        }
        if presence & bit::EVENT_ID != 0 {
            put_str(dst, self.event_id, "event_id")?;
        }
        if presence & bit::PAYLOAD_DIGEST != 0 {
            put_str(dst, self.payload_digest, "payload_digest")?;
        }
        Ok(())
    }
}

/// A CBV2 batch: records for one topic partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// Topic of every record.
    pub topic: String,
    /// Partition of every record.
    pub partition: i32,
    /// Acknowledgement mode.
    pub acks: Acks,
    /// Idempotent producer batch (flag bit 0).
    pub idempotent: bool,
    /// First producer sequence (0: taken from the first record when encoding).
    pub batch_start: u64,
    /// Last producer sequence (0: taken from the last record when encoding).
    pub batch_end: u64,
    /// The records.
    pub records: Vec<Record>,
}

impl Batch {
    /// An empty batch for `topic`/`partition`.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Batch {
            topic: topic.into(),
            partition,
            ..Default::default()
        }
    }

    /// True when `payload` is a batch rather than a CRQ2 command: at least 6
    /// bytes starting with the CBV2 magic and version 2.
    pub fn is_batch(payload: &[u8]) -> bool {
        payload.len() >= 6
            && payload[..4] == BATCH_MAGIC.to_be_bytes()
            && payload[4..6] == BATCH_VERSION.to_be_bytes()
    }

    /// Reads a batch header through `acks` (§8.7), e.g. to learn whether a
    /// PUBLISH gets a response.
    pub fn peek_acks(payload: Bytes) -> WireResult<Acks> {
        let mut r = Reader::new(payload);
        Self::read_header(&mut r).map(|h| h.acks)
    }

    fn read_header(r: &mut Reader) -> WireResult<Batch> {
        let magic = r.u32("batch magic")?;
        if magic != BATCH_MAGIC {
            return Err(WireError::BadBatchMagic(magic));
        }
        let version = r.u16("batch version")?;
        if version != BATCH_VERSION {
            return Err(WireError::BatchVersion(version));
        }
        let flags = r.u16("batch flags")?;
        if flags & !FLAG_IDEMPOTENT != 0 {
            return Err(WireError::BatchFlags(flags));
        }
        let topic = r.string("batch topic")?;
        let partition = r.i32("batch partition")?;
        let acks = Acks::from_wire(&r.string("acks")?)?;
        Ok(Batch {
            topic,
            partition,
            acks,
            idempotent: flags & FLAG_IDEMPOTENT != 0,
            ..Default::default()
        })
    }

    /// Appends the batch encoding to `dst`.
    pub fn encode(&self, policy: RecordVersionPolicy, dst: &mut BytesMut) -> WireResult<()> {
        let (mut start, mut end) = (self.batch_start, self.batch_end);
        if start == 0 {
            if let (Some(first), Some(last)) = (self.records.first(), self.records.last()) {
                start = first.seq_num;
                end = last.seq_num;
            }
        }
        self.encode_header(start, end, self.records.len(), dst)?;
        self.encode_records(self.records.iter().map(Record::borrowed), policy, dst)
    }

    /// Appends a batch with `self`'s header fields (`batch_start` and
    /// `batch_end` as they are) and `records` borrowed from the caller;
    /// `self.records` is ignored. What a producer sends: no `Record` (and no
    /// `String`) is built per record.
    pub fn encode_borrowed<'a, I>(
        &self,
        records: I,
        policy: RecordVersionPolicy,
        dst: &mut BytesMut,
    ) -> WireResult<()>
    where
        I: ExactSizeIterator<Item = RecordRef<'a>> + Clone,
    {
        self.encode_header(self.batch_start, self.batch_end, records.len(), dst)?;
        self.encode_records(records, policy, dst)
    }

    fn encode_header(
        &self,
        start: u64,
        end: u64,
        count: usize,
        dst: &mut BytesMut,
    ) -> WireResult<()> {
        if count > MAX_BATCH_RECORDS {
            return Err(WireError::TooManyRecords(count as u64));
        }
        dst.reserve(48 + self.topic.len());
        dst.put_u32(BATCH_MAGIC);
        dst.put_u16(BATCH_VERSION);
        dst.put_u16(if self.idempotent { FLAG_IDEMPOTENT } else { 0 });
        put_str(dst, &self.topic, "batch topic")?;
        dst.put_i32(self.partition);
        put_str(dst, self.acks.as_str(), "acks")?;
        dst.put_u64(start);
        dst.put_u64(end);
        dst.put_u32(count as u32);
        Ok(())
    }

    fn encode_records<'a>(
        &self,
        records: impl Iterator<Item = RecordRef<'a>> + Clone,
        policy: RecordVersionPolicy,
        dst: &mut BytesMut,
    ) -> WireResult<()> {
        // One allocation for the whole batch.
        dst.reserve(
            records
                .clone()
                .map(|r| 4 + r.encoded_len_hint(&self.topic))
                .sum::<usize>(),
        );
        for record in records {
            // Length prefix patched once the record is written.
            let at = dst.len();
            dst.put_u32(0);
            record.encode_routed(
                &self.topic,
                self.partition,
                policy.version_for(&record),
                dst,
            )?;
            let len = (dst.len() - at - 4) as u32;
            dst[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        Ok(())
    }

    /// Appends a batch whose records are already encoded (each element one
    /// complete record, e.g. as a broker stores them), without decoding them.
    /// The header fields come from `self`; `self.records` is ignored.
    pub fn encode_with_raw_records<'a>(
        &self,
        records: impl ExactSizeIterator<Item = &'a [u8]>,
        dst: &mut BytesMut,
    ) -> WireResult<()> {
        if records.len() > MAX_BATCH_RECORDS {
            return Err(WireError::TooManyRecords(records.len() as u64));
        }
        dst.put_u32(BATCH_MAGIC);
        dst.put_u16(BATCH_VERSION);
        dst.put_u16(if self.idempotent { FLAG_IDEMPOTENT } else { 0 });
        put_str(dst, &self.topic, "batch topic")?;
        dst.put_i32(self.partition);
        put_str(dst, self.acks.as_str(), "acks")?;
        dst.put_u64(self.batch_start);
        dst.put_u64(self.batch_end);
        dst.put_u32(records.len() as u32);
        for record in records {
            put_bytes(dst, record, "record")?;
        }
        Ok(())
    }

    /// The batch encoding as a new buffer.
    pub fn to_bytes(&self, policy: RecordVersionPolicy) -> WireResult<Bytes> {
        let mut dst = BytesMut::new();
        self.encode(policy, &mut dst)?;
        Ok(dst.freeze())
    }

    /// Decodes a batch occupying all of `payload`.
    pub fn decode(payload: Bytes) -> WireResult<Batch> {
        let mut r = Reader::new(payload);
        let mut batch = Self::read_header(&mut r)?;
        batch.batch_start = r.u64("batch_start")?;
        batch.batch_end = r.u64("batch_end")?;
        let count = r.u32("record_count")? as usize;
        if count > MAX_BATCH_RECORDS {
            return Err(WireError::TooManyRecords(count as u64));
        }
        // Each record takes at least a 4-byte length: bound the allocation by the input.
        batch.records.reserve(count.min(r.remaining() / 4));
        for _ in 0..count {
            let raw = r.bytes("record")?;
            batch
                .records
                .push(Record::decode_in_batch(raw, &batch.topic, batch.partition)?);
        }
        r.finish("batch")?;
        Ok(batch)
    }
}
