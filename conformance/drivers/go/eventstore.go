package main

// The event store ops (es_*). Keys, payloads, metadata and states are byte
// strings holding UTF-8 text; byte strings in results are hex.

import (
	"context"
	"encoding/hex"
	"strconv"

	cursus "example.invalid/cursus-sdk/go"
)

// event is one event (or browsed record) in the protocol's shape.
type event struct {
	Topic         string  `json:"topic"`
	Partition     uint32  `json:"partition"`
	Offset        uint64  `json:"offset"`
	Key           *string `json:"key"`
	Value         string  `json:"value"`
	Version       uint64  `json:"version"`
	EventType     string  `json:"event_type"`
	SchemaVersion uint32  `json:"schema_version"`
	Metadata      string  `json:"metadata"`
}

func eventJSON(events []cursus.StoredEvent) []event {
	out := []event{}
	for _, e := range events {
		var key *string
		if e.Key != "" {
			k := hex.EncodeToString([]byte(e.Key))
			key = &k
		}
		out = append(out, event{Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, Key: key,
			Value: hex.EncodeToString([]byte(e.Payload)), Version: e.Version, EventType: e.Type,
			SchemaVersion: e.SchemaVersion, Metadata: hex.EncodeToString([]byte(e.Metadata))})
	}
	return out
}

func snapshotJSON(s *cursus.Snapshot) any {
	if s == nil {
		return nil
	}
	return map[string]any{"version": s.Version, "state": hex.EncodeToString([]byte(s.State))}
}

// text decodes a required hex argument.
func (s *step) text(name string) (string, error) {
	b, err := s.bytes(name)
	if err != nil {
		return "", err
	}
	if b == nil {
		return "", fail("%s: missing argument %s", s.op, name)
	}
	return string(b), nil
}

// optional returns an unsigned argument, or def when absent.
func (s *step) optional(name string, bits int, def uint64) (uint64, error) {
	if _, ok := s.args[name]; !ok {
		return def, nil
	}
	return s.unsigned(name, bits)
}

// event is the step's event: event_type, value, metadata, schema_version
// and event_id.
func (s *step) event() (cursus.Event, error) {
	value, err := s.text("value")
	if err != nil {
		return cursus.Event{}, err
	}
	metadata, err := s.bytes("metadata")
	if err != nil {
		return cursus.Event{}, err
	}
	schema, err := s.optional("schema_version", 32, 0)
	if err != nil {
		return cursus.Event{}, err
	}
	return cursus.Event{Type: s.args["event_type"], Payload: value, Metadata: string(metadata),
		SchemaVersion: uint32(schema), ID: s.args["event_id"]}, nil
}

func appendedJSON(a cursus.Appended) result {
	return result{"version": a.Version, "offset": a.Offset, "partition": a.Partition}
}

// esArgs are the arguments most es ops share.
type esArgs struct {
	store      *cursus.EventStore
	topic, key string
}

func (d *driver) esArgs(s *step, withKey bool) (a esArgs, err error) {
	if a.store, err = lookup(d.stores, s, "store", "store"); err != nil {
		return a, err
	}
	if a.topic, err = s.arg("topic"); err != nil {
		return a, err
	}
	if withKey {
		a.key, err = s.text("key")
	}
	return a, err
}

func (d *driver) eventStore(ctx context.Context, s *step) (result, error) {
	switch s.op {
	case "es_open":
		name, err := s.arg("name")
		if err != nil {
			return nil, err
		}
		store, err := cursus.NewEventStore(ctx, d.options(s)...)
		if err != nil {
			return nil, err
		}
		d.stores[name] = store
		return result{}, nil
	case "es_close":
		store, err := lookup(d.stores, s, "name", "store")
		if err != nil {
			return nil, err
		}
		return result{}, store.Close()
	case "es_append":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		expected, err := s.unsigned("expected_version", 64)
		if err != nil {
			return nil, err
		}
		value, err := s.text("value")
		if err != nil {
			return nil, err
		}
		metadata, err := s.bytes("metadata")
		if err != nil {
			return nil, err
		}
		schema, err := s.optional("schema_version", 32, 0)
		if err != nil {
			return nil, err
		}
		ev := cursus.Event{Type: s.args["event_type"], Payload: value, Metadata: string(metadata),
			SchemaVersion: uint32(schema)}
		appended, err := a.store.Append(ctx, a.topic, a.key, expected, ev)
		if err != nil {
			return nil, err
		}
		return result{"version": appended.Version, "offset": appended.Offset, "partition": appended.Partition}, nil
	case "es_append_id":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		expected, err := s.unsigned("expected_version", 64)
		if err != nil {
			return nil, err
		}
		ev, err := s.event()
		if err != nil {
			return nil, err
		}
		appended, err := a.store.Append(ctx, a.topic, a.key, expected, ev)
		if err != nil {
			return nil, err
		}
		return appendedJSON(appended), nil
	case "es_replay_proof":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		var p cursus.ReplayProof
		if _, given := s.args["expected_last_sequence"]; given {
			expected, argErr := s.unsigned("expected_last_sequence", 64)
			if argErr != nil {
				return nil, argErr
			}
			p, err = a.store.ReplayProofExpecting(ctx, a.topic, a.key, expected)
		} else {
			p, err = a.store.ReplayProof(ctx, a.topic, a.key)
		}
		if err != nil {
			return nil, err
		}
		return result{"status": p.Status, "event_count": p.EventCount, "earliest_sequence": p.EarliestSequence,
			"latest_sequence": p.LatestSequence, "first_event_id": p.FirstEventID, "last_event_id": p.LastEventID,
			"sequence_complete": p.SequenceComplete, "retention_complete": p.RetentionComplete}, nil
	case "es_event_range":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		from, err := s.unsigned("from_sequence", 64)
		if err != nil {
			return nil, err
		}
		to, err := s.unsigned("to_sequence", 64)
		if err != nil {
			return nil, err
		}
		max, err := s.optional("max_records", 32, 0)
		if err != nil {
			return nil, err
		}
		r, err := a.store.EventRange(ctx, a.topic, a.key, from, to, uint32(max))
		if err != nil {
			return nil, err
		}
		records := []map[string]any{}
		for _, e := range r.Events {
			records = append(records, map[string]any{"offset": e.Offset, "version": e.Sequence, "event_id": e.ID,
				"event_type": e.Type, "value": hex.EncodeToString([]byte(e.Payload))})
		}
		return result{"status": r.Proof.Status, "records": records}, nil
	case "es_stream_version":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		v, err := a.store.StreamVersion(ctx, a.topic, a.key)
		if err != nil {
			return nil, err
		}
		return result{"version": v}, nil
	case "es_save_snapshot":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		version, err := s.unsigned("version", 64)
		if err != nil {
			return nil, err
		}
		state, err := s.text("state")
		if err != nil {
			return nil, err
		}
		return result{}, a.store.SaveSnapshot(ctx, a.topic, a.key, version, state)
	case "es_read_snapshot":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		snap, err := a.store.ReadSnapshot(ctx, a.topic, a.key)
		if err != nil {
			return nil, err
		}
		return result{"snapshot": snapshotJSON(snap)}, nil
	case "es_read_stream":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		from, err := s.unsigned("from_version", 64)
		if err != nil {
			return nil, err
		}
		max, err := s.optional("max_events", 32, 0)
		if err != nil {
			return nil, err
		}
		c, err := a.store.Stream(a.topic, a.key, from, cursus.PageLimits{MaxRecords: uint32(max)})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		read, err := c.ReadAll(ctx)
		if err != nil {
			return nil, err
		}
		return result{"snapshot": snapshotJSON(read.Snapshot), "records": eventJSON(read.Events),
			"pages": read.Pages}, nil
	case "es_history":
		a, err := d.esArgs(s, true)
		if err != nil {
			return nil, err
		}
		from, err := s.unsigned("from_version", 64)
		if err != nil {
			return nil, err
		}
		to, err := s.optional("to_version", 64, 0)
		if err != nil {
			return nil, err
		}
		max, err := s.optional("max_records", 32, 0)
		if err != nil {
			return nil, err
		}
		c, err := a.store.History(a.topic, a.key, from, to, cursus.PageLimits{MaxRecords: uint32(max)})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		var events []cursus.StoredEvent
		var last *cursus.EventPage
		pages := 0
		for {
			page, err := c.Next(ctx)
			if err != nil {
				return nil, err
			}
			if page == nil {
				break
			}
			pages++
			events = append(events, page.Events...)
			last = page
		}
		if last == nil {
			return nil, fail("es_history: no page")
		}
		return result{"records": eventJSON(events), "completeness": string(last.Completeness),
			"head_version": last.HeadVersion, "pages": pages}, nil
	case "es_browse":
		a, err := d.esArgs(s, false)
		if err != nil {
			return nil, err
		}
		partition, err := s.unsigned("partition", 32)
		if err != nil {
			return nil, err
		}
		from, err := s.unsigned("from_offset", 64)
		if err != nil {
			return nil, err
		}
		to := cursus.ToEnd
		if _, ok := s.args["to_offset"]; ok {
			if to, err = s.num("to_offset"); err != nil {
				return nil, err
			}
		}
		max, err := s.optional("max_records", 32, 0)
		if err != nil {
			return nil, err
		}
		c, err := a.store.Browse(a.topic, uint32(partition), from, to, cursus.PageLimits{MaxRecords: uint32(max)})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		read, err := c.ReadAll(ctx)
		if err != nil {
			return nil, err
		}
		return result{"records": eventJSON(read.Events), "pages": read.Pages}, nil
	case "es_aggregate":
		return d.aggregate(ctx, s)
	}
	return nil, fail("unknown op %s", s.op)
}

// aggregate runs the aggregate cycle with a counter as state: the
// snapshot's number plus one per event; LoadAggregate saves the state
// (decimal) whenever a snapshot is due.
func (d *driver) aggregate(ctx context.Context, s *step) (result, error) {
	a, err := d.esArgs(s, true)
	if err != nil {
		return nil, err
	}
	appends, err := s.unsigned("appends", 64)
	if err != nil {
		return nil, err
	}
	every, err := s.unsigned("snapshot_every", 64)
	if err != nil {
		return nil, err
	}
	prefix, err := s.text("value_prefix")
	if err != nil {
		return nil, err
	}
	agg, err := cursus.LoadAggregate(ctx, a.store, a.topic, a.key, cursus.AggregateConfig[uint64]{
		Fold: func(n uint64, _ cursus.StoredEvent) uint64 { return n + 1 },
		Unmarshal: func(state string) (uint64, error) {
			n, err := strconv.ParseUint(state, 10, 64)
			if err != nil {
				return 0, fail("snapshot state %q is no counter", state)
			}
			return n, nil
		},
		Marshal:       func(n uint64) (string, error) { return strconv.FormatUint(n, 10), nil },
		SnapshotEvery: every,
	})
	if err != nil {
		return nil, err
	}
	defer agg.Close()
	idPrefix, withIDs := s.args["event_id_prefix"]
	var lastOffset any
	for i := uint64(0); i < appends; i++ {
		ev := cursus.Event{Type: "Counted", Payload: prefix + strconv.FormatUint(i, 10)}
		if withIDs {
			ev.ID = idPrefix + strconv.FormatUint(i, 10)
		}
		stored, err := agg.Append(ctx, ev)
		if err != nil {
			return nil, err
		}
		lastOffset = stored.Offset
	}
	var loaded any
	if snap := agg.LoadedSnapshot(); snap != nil {
		loaded = snap.Version
	}
	return result{"version": agg.Version(), "state": agg.State(), "loaded_snapshot_version": loaded,
		"loaded_events": agg.LoadedEvents(), "last_offset": lastOffset}, nil
}
