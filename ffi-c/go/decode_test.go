package cursus

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// viewRecord is one record of a hand-packed view (nil: the field is absent).
type viewRecord struct {
	topic                 string
	partition             uint32
	offset                int64
	timestamp             int64
	key, value, metadata  []byte
	eventType, eventID    []byte
	schemaVersion, aggVer uint32
}

// packView packs records as bridge/src/records.rs documents the view.
func packView(records []viewRecord) []byte {
	le := binary.LittleEndian
	opt := func(out, field []byte) []byte {
		if field == nil {
			return le.AppendUint32(out, 0xffffffff)
		}
		return append(le.AppendUint32(out, uint32(len(field))), field...)
	}
	out := le.AppendUint32(nil, uint32(len(records)))
	for _, r := range records {
		out = opt(out, []byte(r.topic))
		out = le.AppendUint32(out, r.partition)
		out = le.AppendUint64(out, uint64(r.offset))
		out = le.AppendUint64(out, uint64(r.timestamp))
		out = opt(out, r.key)
		out = opt(out, r.value)
		out = opt(out, r.metadata)
		out = opt(out, r.eventType)
		if r.eventType != nil {
			out = le.AppendUint32(out, r.schemaVersion)
			out = le.AppendUint64(out, uint64(r.aggVer))
			out = opt(out, r.eventID)
		}
	}
	return out
}

func TestDecodeRecordsReadsEveryField(t *testing.T) {
	records := []viewRecord{
		{topic: "a", partition: 3, offset: 7, timestamp: 1_700_000_000_123, key: []byte("k"), value: []byte("v1")},
		{topic: "a", offset: 8, key: []byte{}, value: []byte{}, metadata: []byte(`{"m":1}`)},
		{topic: "bb", partition: 1, offset: 9, value: []byte("v3"), eventType: []byte("OrderPlaced"),
			schemaVersion: 2, aggVer: 5, eventID: []byte("id-1")},
		{topic: "bb", offset: 10, value: []byte("v4"), eventType: []byte("E"), aggVer: 1},
	}
	view := packView(records)
	got := decodeRecords(view)
	clear(view) // the messages own their bytes: nothing points into the view
	if len(got) != 4 {
		t.Fatalf("%d messages", len(got))
	}
	m := got[0]
	if m.Topic != "a" || m.Partition != 3 || m.Offset != 7 || string(m.Key) != "k" || string(m.Value) != "v1" ||
		!m.Timestamp.Equal(time.UnixMilli(1_700_000_000_123)) || m.Metadata != nil || m.Event != nil {
		t.Fatalf("record 0: %+v", m)
	}
	if m = got[1]; m.Key == nil || len(m.Key) != 0 || m.Value == nil || len(m.Value) != 0 ||
		m.Metadata == nil || *m.Metadata != `{"m":1}` || m.Event != nil {
		t.Fatalf("record 1 (empty key and value, metadata): %+v", m)
	}
	ev := got[2].Event
	if m = got[2]; m.Topic != "bb" || m.Key != nil || string(m.Value) != "v3" || ev == nil ||
		*ev != (RecordEvent{Type: "OrderPlaced", SchemaVersion: 2, AggregateVersion: 5, ID: "id-1"}) {
		t.Fatalf("record 2 (an event): %+v %+v", m, ev)
	}
	if ev = got[3].Event; ev == nil || *ev != (RecordEvent{Type: "E", AggregateVersion: 1}) {
		t.Fatalf("record 3 (an event without an id): %+v", ev)
	}
	// Appending to a value never writes over the next record's bytes.
	_ = append(got[0].Value, "XXXXXXXX"...)
	_ = append(got[0].Key, "XXXXXXXX"...)
	if string(got[0].Value) != "v1" || got[1].Metadata == nil || *got[1].Metadata != `{"m":1}` ||
		!bytes.Equal(got[2].Value, []byte("v3")) {
		t.Fatalf("an append wrote over other fields: %+v", got)
	}
	if got := decodeRecords(packView(nil)); len(got) != 0 {
		t.Fatalf("an empty view: %+v", got)
	}
}
