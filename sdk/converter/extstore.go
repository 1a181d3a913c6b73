package converter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetherhq/tether/sdk/common"
)

// DefaultPayloadSizeThreshold is the size (bytes) above which a payload
// goes to external storage when ExternalStorage.PayloadSizeThreshold is 0
// (Temporal's default, 256 KiB).
const DefaultPayloadSizeThreshold = 256 * 1024

// MetadataEncodingProtoJSON and MetadataMessageType mark a payload that is
// a storage reference (Temporal's json/protobuf encoding of its
// temporal.api.sdk.v1.ExternalStorageReference message), so that a
// reference one SDK wrote is one the other reads.
const (
	MetadataEncodingProtoJSON = "json/protobuf"
	MetadataMessageType       = "messageType"
	storageReferenceType      = "temporal.api.sdk.v1.ExternalStorageReference"
)

// StorageDriverTargetInfo identifies the workflow or activity on whose
// behalf a payload is stored (Temporal's): a StorageDriverWorkflowInfo or
// a StorageDriverActivityInfo. Tether's SDK converts payloads where it
// sends them, on the HTTP edge, so a driver gets no target (nil).
type StorageDriverTargetInfo interface {
	isStorageDriverTargetInfo()
}

// StorageDriverWorkflowInfo is the workflow a payload is stored for.
type StorageDriverWorkflowInfo struct {
	// Namespace is the workflow's namespace.
	Namespace string
	// WorkflowType is the workflow's type.
	WorkflowType string
	// WorkflowID is the workflow's id.
	WorkflowID string
	// RunID is the run's id.
	RunID string
}

func (StorageDriverWorkflowInfo) isStorageDriverTargetInfo() {}

// StorageDriverActivityInfo is the standalone activity a payload is stored
// for.
type StorageDriverActivityInfo struct {
	// Namespace is the activity's namespace.
	Namespace string
	// ActivityType is the activity's type.
	ActivityType string
	// ActivityID is the activity's id.
	ActivityID string
	// RunID is the activity's run id.
	RunID string
}

func (StorageDriverActivityInfo) isStorageDriverTargetInfo() {}

// StorageDriverStoreContext is what StorageDriver.Store and
// StorageDriverSelector.SelectDriver get (Temporal's).
type StorageDriverStoreContext struct {
	// Context bounds the operation.
	Context context.Context
	// Target is the workflow or activity the payload belongs to, when known.
	Target StorageDriverTargetInfo
}

// StorageDriverRetrieveContext is what StorageDriver.Retrieve gets.
type StorageDriverRetrieveContext struct {
	// Context bounds the operation.
	Context context.Context
}

// StorageDriverClaim is the opaque token StorageDriver.Store returns for a
// payload: it travels (and is stored) in the payload's place, and
// Retrieve finds the payload with it.
type StorageDriverClaim struct {
	// ClaimData is the driver's data (a key, a bucket, …).
	ClaimData map[string]string `json:"claim_data"`
}

// StorageDriver stores payloads outside the server (Temporal's
// converter.StorageDriver): an object store, a database.
type StorageDriver interface {
	// Name identifies this driver instance; it travels with each claim
	// and picks the driver that retrieves it, so it must not change.
	Name() string
	// Type identifies the driver implementation.
	Type() string
	// Store persists payloads and returns one claim per payload, in order.
	Store(ctx StorageDriverStoreContext, payloads []*common.Payload) ([]StorageDriverClaim, error)
	// Retrieve returns the payloads of claims, in order.
	Retrieve(ctx StorageDriverRetrieveContext, claims []StorageDriverClaim) ([]*common.Payload, error)
}

// StorageDriverSelector chooses the driver that stores a payload, or nil
// to keep it inline (Temporal's).
type StorageDriverSelector interface {
	// SelectDriver returns the driver for payload, or nil.
	SelectDriver(ctx StorageDriverStoreContext, payload *common.Payload) (StorageDriver, error)
}

// ExternalStorage configures external payload storage (Temporal's
// converter.ExternalStorage, set in client.Options.ExternalStorage): a
// payload larger than PayloadSizeThreshold, as the data converter and its
// codecs made it, is stored by a driver and a reference to it travels and
// is stored by the server in its place; reading the reference retrieves
// the payload.
type ExternalStorage struct {
	// Drivers are the drivers that store and retrieve payloads; their
	// names must be distinct.
	Drivers []StorageDriver
	// DriverSelector picks a driver per payload; it must be set when
	// there are several drivers. Nil with one driver: that driver.
	DriverSelector StorageDriverSelector
	// PayloadSizeThreshold is the size in bytes above which a payload is
	// stored externally (0: DefaultPayloadSizeThreshold).
	PayloadSizeThreshold int
}

// storageReference is Temporal's ExternalStorageReference message in its
// protobuf JSON form.
type storageReference struct {
	DriverName string            `json:"driverName"`
	ClaimData  map[string]string `json:"claimData,omitempty"`
}

// NewExternalStorageDataConverter returns parent with external storage
// (Tether's: client.Options.ExternalStorage calls it for the client and
// its workers). A payload parent makes that is larger than the threshold
// goes to the selected driver and a storage reference payload replaces
// it; a reference is retrieved and read by parent. A driver's failure
// fails the conversion, naming the driver. An ExternalStorage without
// drivers returns parent itself.
func NewExternalStorageDataConverter(parent DataConverter, es ExternalStorage) (DataConverter, error) {
	if len(es.Drivers) == 0 {
		if es.DriverSelector != nil {
			return nil, errors.New("converter: ExternalStorage.DriverSelector without Drivers")
		}
		return parent, nil
	}
	if es.PayloadSizeThreshold < 0 {
		return nil, errors.New("converter: ExternalStorage.PayloadSizeThreshold must not be negative")
	}
	if len(es.Drivers) > 1 && es.DriverSelector == nil {
		return nil, errors.New("converter: ExternalStorage.DriverSelector must be set when more than one driver is provided")
	}
	drivers := make(map[string]StorageDriver, len(es.Drivers))
	for i, d := range es.Drivers {
		if d == nil {
			return nil, fmt.Errorf("converter: ExternalStorage.Drivers[%d] is nil", i)
		}
		if _, dup := drivers[d.Name()]; dup {
			return nil, fmt.Errorf("converter: duplicate storage driver name %q", d.Name())
		}
		drivers[d.Name()] = d
	}
	if parent == nil {
		parent = GetDefaultDataConverter()
	}
	threshold := es.PayloadSizeThreshold
	if threshold == 0 {
		threshold = DefaultPayloadSizeThreshold
	}
	return &externalStorageConverter{parent: parent, drivers: drivers, first: es.Drivers[0], selector: es.DriverSelector, threshold: threshold}, nil
}

type externalStorageConverter struct {
	parent    DataConverter
	drivers   map[string]StorageDriver
	first     StorageDriver
	selector  StorageDriverSelector
	threshold int
}

// payloadSize is the size of p as it would travel: its data and metadata.
func payloadSize(p *common.Payload) int {
	n := len(p.Data)
	for k, v := range p.Metadata {
		n += len(k) + len(v)
	}
	return n
}

// store returns p, or the reference to it once a driver stored it.
func (c *externalStorageConverter) store(p *common.Payload) (*common.Payload, error) {
	if p == nil || payloadSize(p) <= c.threshold {
		return p, nil
	}
	sctx := StorageDriverStoreContext{Context: context.Background()}
	d := c.first
	if c.selector != nil {
		sel, err := c.selector.SelectDriver(sctx, p)
		if err != nil {
			return nil, fmt.Errorf("storage driver selector failed: %w", err)
		}
		if sel == nil {
			return p, nil
		}
		if c.drivers[sel.Name()] == nil {
			return nil, fmt.Errorf("storage driver selector returned unregistered driver %q", sel.Name())
		}
		d = sel
	}
	claims, err := d.Store(sctx, []*common.Payload{p})
	if err != nil {
		return nil, fmt.Errorf("storage driver %q store failed: %w", d.Name(), err)
	}
	if len(claims) != 1 {
		return nil, fmt.Errorf("storage driver %q returned %d claims for 1 payload", d.Name(), len(claims))
	}
	data, err := json.Marshal(storageReference{DriverName: d.Name(), ClaimData: claims[0].ClaimData})
	if err != nil {
		return nil, fmt.Errorf("storage reference: %w", err)
	}
	return &common.Payload{
		Metadata: map[string][]byte{MetadataEncoding: []byte(MetadataEncodingProtoJSON), MetadataMessageType: []byte(storageReferenceType)},
		Data:     data,
	}, nil
}

// retrieve returns the payload p refers to, or p when it is not a
// reference.
func (c *externalStorageConverter) retrieve(p *common.Payload) (*common.Payload, error) {
	if p == nil || string(p.Metadata[MetadataEncoding]) != MetadataEncodingProtoJSON || string(p.Metadata[MetadataMessageType]) != storageReferenceType {
		return p, nil
	}
	var ref storageReference
	if err := json.Unmarshal(p.Data, &ref); err != nil {
		return nil, fmt.Errorf("storage reference: %w", err)
	}
	d := c.drivers[ref.DriverName]
	if d == nil {
		return nil, fmt.Errorf("payload stored by driver %q, which is not configured", ref.DriverName)
	}
	out, err := d.Retrieve(StorageDriverRetrieveContext{Context: context.Background()}, []StorageDriverClaim{{ClaimData: ref.ClaimData}})
	if err != nil {
		return nil, fmt.Errorf("storage driver %q retrieve failed: %w", d.Name(), err)
	}
	if len(out) != 1 || out[0] == nil {
		return nil, fmt.Errorf("storage driver %q returned %d payloads for 1 claim", d.Name(), len(out))
	}
	return out[0], nil
}

// ToPayload implements DataConverter.
func (c *externalStorageConverter) ToPayload(value any) (*common.Payload, error) {
	p, err := c.parent.ToPayload(value)
	if err != nil {
		return nil, err
	}
	return c.store(p)
}

// FromPayload implements DataConverter.
func (c *externalStorageConverter) FromPayload(payload *common.Payload, valuePtr any) error {
	p, err := c.retrieve(payload)
	if err != nil {
		return err
	}
	return c.parent.FromPayload(p, valuePtr)
}

// ToPayloads implements DataConverter.
func (c *externalStorageConverter) ToPayloads(values ...any) (*common.Payloads, error) {
	ps, err := c.parent.ToPayloads(values...)
	if err != nil || ps == nil {
		return ps, err
	}
	out := &common.Payloads{Payloads: make([]*common.Payload, len(ps.Payloads))}
	for i, p := range ps.Payloads {
		if out.Payloads[i], err = c.store(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FromPayloads implements DataConverter.
func (c *externalStorageConverter) FromPayloads(payloads *common.Payloads, valuePtrs ...any) error {
	if payloads == nil {
		return c.parent.FromPayloads(nil, valuePtrs...)
	}
	in := &common.Payloads{Payloads: make([]*common.Payload, len(payloads.Payloads))}
	for i, p := range payloads.Payloads {
		var err error
		if i < len(valuePtrs) {
			if p, err = c.retrieve(p); err != nil {
				return err
			}
		}
		in.Payloads[i] = p
	}
	return c.parent.FromPayloads(in, valuePtrs...)
}

// ToString implements DataConverter: a reference renders as what it
// refers to when the driver has it.
func (c *externalStorageConverter) ToString(input *common.Payload) string {
	if p, err := c.retrieve(input); err == nil {
		return c.parent.ToString(p)
	}
	return c.parent.ToString(input)
}

// ToStrings implements DataConverter.
func (c *externalStorageConverter) ToStrings(input *common.Payloads) []string {
	out := make([]string, len(input.GetPayloads()))
	for i, p := range input.GetPayloads() {
		out[i] = c.ToString(p)
	}
	return out
}
