// The contract every call keeps: version check, timeouts, option errors, typed admin results.

package cursus

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestVersionCheckPasses(t *testing.T) {
	if Version == "" || LibraryVersion() != Version {
		t.Fatalf("package %q, library %q", Version, LibraryVersion())
	}
	if err := versionChecked(); err != nil {
		t.Fatal(err)
	}
	// The error New* would return for another library version.
	err := checkVersion("0.0.0-other")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "version_mismatch" || !errors.Is(err, ErrInternal) {
		t.Fatalf("mismatch error %#v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "0.0.0-other") || !strings.Contains(msg, Version) {
		t.Fatalf("the message does not name both versions: %q", msg)
	}
}

func TestTimeoutContract(t *testing.T) {
	// No deadline: the library's marker, not a number of Go's own.
	if got := timeoutMillis(context.Background()); got != -2 {
		t.Fatalf("no deadline: %d ms", got)
	}
	if got := DefaultTimeout(); got != 30*time.Second {
		t.Fatalf("the library's default: %v", got)
	}
	if got := sliceableMillis(-2); got != DefaultTimeout().Milliseconds() {
		t.Fatalf("a sliced default: %d ms", got)
	}
	if got := timeoutMillis(NoTimeout(context.Background())); got != -1 {
		t.Fatalf("NoTimeout: %d ms", got)
	}
	ctx, cancel := context.WithTimeout(NoTimeout(context.Background()), time.Hour)
	defer cancel()
	if got := timeoutMillis(ctx); got <= 0 || got > time.Hour.Milliseconds() {
		t.Fatalf("a deadline bounds even NoTimeout: %d ms", got)
	}
	p := newProducer(t)
	// The marker reaches the library (one call), and a cancellable
	// context without deadline slices the library's default.
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancellable, stop := context.WithCancel(context.Background())
	defer stop()
	if err := p.Flush(cancellable); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(NoTimeout(ctxT(t))); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(NoTimeout(context.Background())); err != nil {
		t.Fatal(err)
	}
}

func TestOptionErrorsNameTheKindAndItsOptions(t *testing.T) {
	_, err := NewProducer(ctxT(t), WithBootstrap(broker), WithOption("group_id", "g"))
	var ce *Error
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrValidation) || errors.Is(err, ErrRouting) {
		t.Fatalf("wrong classification: %v", err)
	}
	want := `invalid_argument (validation): unknown producer option "group_id"; known options: acks, `
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "linger_ms") || strings.Contains(msg, "group_id,") {
		t.Fatalf("message %q", msg)
	}
	if ce.Retryable || ce.Kind != "invalid_argument" || ce.Status != StatusInvalidArgument {
		t.Fatalf("unexpected error: %#v", ce)
	}
	if _, err := NewProducer(ctxT(t), WithBootstrap(broker), WithOption("linger_ms", "soon")); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "linger_ms") {
		t.Fatalf("bad value: %v", err)
	}
	if _, err := NewConsumer(ctxT(t), WithBootstrap(broker)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("consumer without group: %v", err)
	}
}

func TestAdminTypedResultsAndErrors(t *testing.T) {
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	topic := unique("go-admin")
	_, err = a.DescribeTopic(ctx, topic)
	var ce *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ce) || ce.Fields["topic"] != topic || ce.Code != "topic_not_found" {
		t.Fatalf("want not_found, got %v", err)
	}
	if want := "topic_not_found (not_found): topic=" + topic; err.Error() != want {
		t.Fatalf("error text %q, want %q", err.Error(), want)
	}
	if _, err := a.DeleteTopic(ctx, topic, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete missing: %v", err)
	}
	if r, err := a.DeleteTopic(ctx, topic, true); err != nil || r.Deleted {
		t.Fatalf("delete missing if_exists: %+v %v", r, err)
	}
	if _, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"no_such_field": "1"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad option: %v", err)
	}
	info, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"partitions": "3", "retention_hours": "24", "read_acl": "alice,bob"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != topic || info.Partitions != 3 || info.Revision != 1 || info.RetentionHours != 24 ||
		!slices.Equal(info.ReadACL, []string{"alice", "bob"}) || len(info.WriteACL) != 0 ||
		info.MinInSyncReplicas != DefaultMinInSyncReplicas || info.CleanupPolicy == "" || info.Partitioner == "" {
		t.Fatalf("created %+v", info)
	}
	if altered, err := a.AlterTopicConfig(ctx, topic, 1); err != nil || altered.MinInSyncReplicas != 1 {
		t.Fatalf("altered %+v %v", altered, err)
	}
	if altered, err := a.AlterTopicConfig(ctx, topic, DefaultMinInSyncReplicas); err != nil || altered.MinInSyncReplicas != -1 {
		t.Fatalf("altered to the default %+v %v", altered, err)
	}
	desc, err := a.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Topic != topic || desc.Definition.Name != topic || desc.Definition.Partitions != 3 || len(desc.Partitions) != 3 {
		t.Fatalf("described %+v", desc)
	}
	for i, p := range desc.Partitions {
		if p.ID != uint32(i) || p.Leader != broker || len(p.Replicas) != 1 || !slices.Equal(p.ISR, p.Replicas) ||
			p.Earliest != 0 || p.LEO != 0 || p.HWM != 0 {
			t.Fatalf("partition %d described as %+v", i, p)
		}
	}
	md, err := a.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if md.Topic.Name != topic || md.Topic.Partitions != 3 || len(md.Leaders) != 3 || md.Leaders[2] != broker || len(md.Epochs) != 3 {
		t.Fatalf("metadata %+v", md)
	}
	offsets, err := a.ListOffsets(ctx, topic, AllPartitions)
	if err != nil || len(offsets) != 3 {
		t.Fatalf("offsets %+v %v", offsets, err)
	}
	one, err := a.ListOffsets(ctx, topic, 2)
	if err != nil || len(one) != 1 || one[0].Partition != 2 || one[0].Latest != 0 {
		t.Fatalf("offsets of partition 2: %+v %v", one, err)
	}
	if _, err := a.TruncateTopic(ctx, topic, md.Topic.Revision+100); !errors.Is(err, ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	tr, err := a.TruncateTopic(ctx, topic, md.Topic.Revision)
	if err != nil || tr.Revision != md.Topic.Revision+1 || tr.LifecycleEpoch <= md.Topic.LifecycleEpoch {
		t.Fatalf("truncated %+v %v (before: %+v)", tr, err, md.Topic)
	}
	names, err := a.ListTopics(ctx)
	if err != nil || !slices.Contains(names, topic) {
		t.Fatalf("%s not in %v (%v)", topic, names, err)
	}
	if help, err := a.Help(ctx); err != nil || !slices.Contains(help, "PUBLISH") {
		t.Fatalf("help %v %v", help, err)
	}
	if _, err := a.ListGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := a.DeleteTopic(ctx, topic, false); err != nil || !r.Deleted {
		t.Fatalf("delete %+v %v", r, err)
	}
	if r, err := a.DeleteTopic(ctx, topic, true); err != nil || r.Deleted {
		t.Fatalf("delete again %+v %v", r, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	if _, err := a.ListTopics(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("want ErrClosed, got %v", err)
	}
}
