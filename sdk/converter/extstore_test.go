package converter_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
)

// mapDriver keeps payloads in a map.
type mapDriver struct {
	name string
	m    map[string]*common.Payload
}

func (d *mapDriver) Name() string { return d.name }
func (d *mapDriver) Type() string { return "map" }
func (d *mapDriver) Store(_ converter.StorageDriverStoreContext, ps []*common.Payload) ([]converter.StorageDriverClaim, error) {
	out := make([]converter.StorageDriverClaim, len(ps))
	for i, p := range ps {
		k := d.name + "-" + string(rune('a'+len(d.m)))
		d.m[k] = p
		out[i] = converter.StorageDriverClaim{ClaimData: map[string]string{"k": k}}
	}
	return out, nil
}
func (d *mapDriver) Retrieve(_ converter.StorageDriverRetrieveContext, cs []converter.StorageDriverClaim) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(cs))
	for i, c := range cs {
		out[i] = d.m[c.ClaimData["k"]]
	}
	return out, nil
}

// bySize sends payloads to big when they exceed 100 bytes and keeps the
// others inline.
type bySize struct{ big converter.StorageDriver }

func (s bySize) SelectDriver(_ converter.StorageDriverStoreContext, p *common.Payload) (converter.StorageDriver, error) {
	if len(p.Data) > 100 {
		return s.big, nil
	}
	return nil, nil
}

func TestExternalStorageDataConverter(t *testing.T) {
	big := &mapDriver{name: "big", m: map[string]*common.Payload{}}
	small := &mapDriver{name: "small", m: map[string]*common.Payload{}}
	dc, err := converter.NewExternalStorageDataConverter(converter.GetDefaultDataConverter(), converter.ExternalStorage{
		Drivers: []converter.StorageDriver{small, big}, DriverSelector: bySize{big: big}, PayloadSizeThreshold: 20})
	require.NoError(t, err)

	// Under the threshold: inline.
	p, err := dc.ToPayload("short")
	require.NoError(t, err)
	require.Equal(t, "json/plain", string(p.Metadata[converter.MetadataEncoding]))
	// Over the threshold, the selector keeps it inline.
	p, err = dc.ToPayload(strings.Repeat("m", 50))
	require.NoError(t, err)
	require.Equal(t, "json/plain", string(p.Metadata[converter.MetadataEncoding]))
	// Over the selector's size: a reference to the big driver.
	long := strings.Repeat("x", 500)
	ps, err := dc.ToPayloads(long, 1)
	require.NoError(t, err)
	ref := ps.Payloads[0]
	require.Equal(t, converter.MetadataEncodingProtoJSON, string(ref.Metadata[converter.MetadataEncoding]))
	require.Equal(t, "temporal.api.sdk.v1.ExternalStorageReference", string(ref.Metadata[converter.MetadataMessageType]))
	require.JSONEq(t, `{"driverName":"big","claimData":{"k":"big-a"}}`, string(ref.Data))
	require.Len(t, big.m, 1)
	require.Empty(t, small.m)

	var s string
	var n int
	require.NoError(t, dc.FromPayloads(ps, &s, &n))
	require.Equal(t, long, s)
	require.Equal(t, 1, n)

	// A reference to a driver that is not configured fails, named.
	other, err := converter.NewExternalStorageDataConverter(nil, converter.ExternalStorage{Drivers: []converter.StorageDriver{small}})
	require.NoError(t, err)
	require.ErrorContains(t, other.FromPayload(ref, &s), `driver "big", which is not configured`)

	// Bad configurations are refused.
	_, err = converter.NewExternalStorageDataConverter(nil, converter.ExternalStorage{Drivers: []converter.StorageDriver{small, small}, DriverSelector: bySize{}})
	require.ErrorContains(t, err, "duplicate storage driver name")
	_, err = converter.NewExternalStorageDataConverter(nil, converter.ExternalStorage{Drivers: []converter.StorageDriver{small}, PayloadSizeThreshold: -1})
	require.ErrorContains(t, err, "PayloadSizeThreshold")
}
