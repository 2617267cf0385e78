package cursus

import (
	"errors"
	"testing"
)

// The standalone test broker refuses every cluster admin call with
// distribution_not_enabled, class validation.
func TestClusterAdminNeedsDistributedMode(t *testing.T) {
	a := newAdmin(t)
	ctx := ctxT(t)
	_, statusErr := a.ClusterStatus(ctx)
	_, electErr := a.ElectLeader(ctx, "orders", 0, "broker-1")
	_, listErr := a.ListCluster(ctx)
	_, reassignErr := a.ReassignPartition(ctx, "orders", 0, "broker-1")
	for name, err := range map[string]error{"ClusterStatus": statusErr, "ElectLeader": electErr,
		"ListCluster": listErr, "ReassignPartition": reassignErr} {
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != "distribution_not_enabled" || ce.Class != "validation" ||
			!errors.Is(err, ErrValidation) || ce.Status != StatusValidation {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ListCluster(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}

// Out-of-range entries of a broker list read as the documented fallbacks.
func TestClusterBrokersOfAnInvalidListIsEmpty(t *testing.T) {
	if got := readClusterBrokerList(nil); got == nil || len(got) != 0 {
		t.Errorf("got %v", got)
	}
}
