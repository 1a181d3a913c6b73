// Package converter turns values into payloads and back, in the shape of
// Temporal's go.temporal.io/sdk/converter: a [DataConverter] made of
// [PayloadConverter]s (GetDefaultDataConverter: nil, []byte and JSON), and
// [PayloadCodec]s that transform encoded payloads (encryption, compression)
// wrapped around a DataConverter by [NewCodecDataConverter].
//
// The SDK's payloads travel through Tether's REST API as JSON values. With
// the default converter nothing changes: a value travels as its plain JSON.
// With another one (client.Options.DataConverter), each payload the SDK
// sends goes through it, and a payload that is not plain JSON (an encrypted
// one, say) travels as an envelope, a JSON object with the single key
// [EnvelopeKey]; the server stores it as it is and never decodes it (see
// [ToWire], [FromWire] and docs/sdk.md, "Data converters and codecs").
package converter

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/tetherhq/tether/sdk/common"
)

// Metadata keys and encodings of Temporal's converters.
const (
	// MetadataEncoding is the metadata key of a payload's encoding.
	MetadataEncoding = "encoding"
	// MetadataEncodingNil is the encoding of a nil value.
	MetadataEncodingNil = "binary/null"
	// MetadataEncodingBinary is the encoding of a []byte value.
	MetadataEncodingBinary = "binary/plain"
	// MetadataEncodingJSON is the encoding of a JSON value.
	MetadataEncodingJSON = common.EncodingJSON
)

// Errors of the payload converters (Temporal's names).
var (
	// ErrMetadataIsNotSet: a payload has no metadata.
	ErrMetadataIsNotSet = errors.New("metadata is not set")
	// ErrEncodingIsNotSet: a payload's metadata has no encoding.
	ErrEncodingIsNotSet = errors.New("payload encoding metadata is not set")
	// ErrEncodingIsNotSupported: no converter reads a payload's encoding.
	ErrEncodingIsNotSupported = errors.New("payload encoding is not supported")
	// ErrUnableToEncode: a value could not be encoded.
	ErrUnableToEncode = errors.New("unable to encode")
	// ErrUnableToDecode: a payload could not be decoded.
	ErrUnableToDecode = errors.New("unable to decode")
	// ErrUnableToFindConverter: no payload converter took a value.
	ErrUnableToFindConverter = errors.New("unable to find converter")
	// ErrValuePtrIsNotPointer: a decode target is not a pointer.
	ErrValuePtrIsNotPointer = errors.New("not a pointer type")
	// ErrValuePtrIsNotSettable: a decode target cannot be set.
	ErrValuePtrIsNotSettable = errors.New("unable to set value")
	// ErrTooManyArg: more decode targets than payloads.
	ErrTooManyArg = errors.New("too many arguments")
)

// DataConverter converts values to payloads and back (Temporal's
// converter.DataConverter).
type DataConverter interface {
	// ToPayload converts one value.
	ToPayload(value any) (*common.Payload, error)
	// FromPayload converts one payload into the value valuePtr points to.
	FromPayload(payload *common.Payload, valuePtr any) error
	// ToPayloads converts a list of values (the arguments of a call).
	ToPayloads(value ...any) (*common.Payloads, error)
	// FromPayloads converts payloads into the values valuePtrs point to;
	// fewer pointers than payloads leaves the rest unread.
	FromPayloads(payloads *common.Payloads, valuePtrs ...any) error
	// ToString renders a payload for humans (logs, CLI).
	ToString(input *common.Payload) string
	// ToStrings renders payloads for humans.
	ToStrings(input *common.Payloads) []string
}

// PayloadConverter converts values of one encoding (Temporal's
// converter.PayloadConverter). ToPayload returns nil, nil for a value it
// does not take, so that a composite tries the next one.
type PayloadConverter interface {
	// ToPayload converts value, or returns nil, nil when it does not take it.
	ToPayload(value any) (*common.Payload, error)
	// FromPayload converts a payload of its encoding into *valuePtr.
	FromPayload(payload *common.Payload, valuePtr any) error
	// ToString renders a payload of its encoding for humans.
	ToString(payload *common.Payload) string
	// Encoding is the metadata encoding it writes and reads.
	Encoding() string
}

// EncodedValue is one encoded value read later (Temporal's
// converter.EncodedValue).
type EncodedValue interface {
	// HasValue reports whether there is a value.
	HasValue() bool
	// Get decodes the value into valuePtr.
	Get(valuePtr any) error
}

// EncodedValues is a list of encoded values read later (Temporal's
// converter.EncodedValues).
type EncodedValues interface {
	// HasValues reports whether there is at least one value.
	HasValues() bool
	// Get decodes the values into valuePtrs, in order.
	Get(valuePtr ...any) error
}

// CompositeDataConverter is a DataConverter made of payload converters:
// ToPayload uses the first that takes the value, FromPayload the one of
// the payload's encoding.
type CompositeDataConverter struct {
	order []PayloadConverter
	byEnc map[string]PayloadConverter
	// dflt marks the converter of GetDefaultDataConverter.
	dflt bool
}

// NewCompositeDataConverter returns a DataConverter that tries
// payloadConverters in order.
func NewCompositeDataConverter(payloadConverters ...PayloadConverter) DataConverter {
	return newComposite(payloadConverters...)
}

func newComposite(pcs ...PayloadConverter) *CompositeDataConverter {
	c := &CompositeDataConverter{order: pcs, byEnc: make(map[string]PayloadConverter, len(pcs))}
	for _, pc := range pcs {
		c.byEnc[pc.Encoding()] = pc
	}
	return c
}

// GetDefaultDataConverter returns Temporal's default converter: nil, then
// []byte, then JSON. The SDK treats it (and a nil DataConverter) as "no
// converter": payloads travel as plain JSON, as they always have.
func GetDefaultDataConverter() DataConverter {
	c := newComposite(NewNilPayloadConverter(), NewByteSlicePayloadConverter(), NewJSONPayloadConverter())
	c.dflt = true
	return c
}

// IsDefault reports whether dc is nil or a converter returned by
// GetDefaultDataConverter.
func IsDefault(dc DataConverter) bool {
	if dc == nil {
		return true
	}
	c, ok := dc.(*CompositeDataConverter)
	return ok && c.dflt
}

// ToPayload implements DataConverter.
func (c *CompositeDataConverter) ToPayload(value any) (*common.Payload, error) {
	for _, pc := range c.order {
		p, err := pc.ToPayload(value)
		if err != nil {
			return nil, err
		}
		if p != nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("value of type %T: %w", value, ErrUnableToFindConverter)
}

// FromPayload implements DataConverter.
func (c *CompositeDataConverter) FromPayload(payload *common.Payload, valuePtr any) error {
	if payload == nil {
		return nil
	}
	pc, err := c.converterOf(payload)
	if err != nil {
		return err
	}
	return pc.FromPayload(payload, valuePtr)
}

func (c *CompositeDataConverter) converterOf(p *common.Payload) (PayloadConverter, error) {
	if p.GetMetadata() == nil {
		return nil, ErrMetadataIsNotSet
	}
	enc, ok := p.Metadata[MetadataEncoding]
	if !ok {
		return nil, ErrEncodingIsNotSet
	}
	pc, ok := c.byEnc[string(enc)]
	if !ok {
		return nil, fmt.Errorf("encoding %q: %w", enc, ErrEncodingIsNotSupported)
	}
	return pc, nil
}

// ToPayloads implements DataConverter.
func (c *CompositeDataConverter) ToPayloads(values ...any) (*common.Payloads, error) {
	return toPayloads(c, values)
}

// FromPayloads implements DataConverter.
func (c *CompositeDataConverter) FromPayloads(payloads *common.Payloads, valuePtrs ...any) error {
	return fromPayloads(c, payloads, valuePtrs)
}

// ToString implements DataConverter.
func (c *CompositeDataConverter) ToString(input *common.Payload) string {
	pc, err := c.converterOf(input)
	if err != nil {
		return err.Error()
	}
	return pc.ToString(input)
}

// ToStrings implements DataConverter.
func (c *CompositeDataConverter) ToStrings(input *common.Payloads) []string {
	return toStrings(c, input)
}

func toPayloads(dc DataConverter, values []any) (*common.Payloads, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := &common.Payloads{Payloads: make([]*common.Payload, len(values))}
	for i, v := range values {
		p, err := dc.ToPayload(v)
		if err != nil {
			return nil, fmt.Errorf("values[%d]: %w", i, err)
		}
		out.Payloads[i] = p
	}
	return out, nil
}

func fromPayloads(dc DataConverter, payloads *common.Payloads, ptrs []any) error {
	ps := payloads.GetPayloads()
	if len(ptrs) > len(ps) {
		return fmt.Errorf("%d values for %d payloads: %w", len(ptrs), len(ps), ErrTooManyArg)
	}
	for i, ptr := range ptrs {
		if err := dc.FromPayload(ps[i], ptr); err != nil {
			return fmt.Errorf("payload %d: %w", i, err)
		}
	}
	return nil
}

func toStrings(dc DataConverter, input *common.Payloads) []string {
	var out []string
	for _, p := range input.GetPayloads() {
		out = append(out, dc.ToString(p))
	}
	return out
}

func newPayload(data []byte, enc string) *common.Payload {
	return &common.Payload{Metadata: map[string][]byte{MetadataEncoding: []byte(enc)}, Data: data}
}

// settable returns the value valuePtr points to.
func settable(valuePtr any) (reflect.Value, error) {
	v := reflect.ValueOf(valuePtr)
	if v.Kind() != reflect.Pointer {
		return reflect.Value{}, fmt.Errorf("%T: %w", valuePtr, ErrValuePtrIsNotPointer)
	}
	if v.IsNil() || !v.Elem().CanSet() {
		return reflect.Value{}, fmt.Errorf("%T: %w", valuePtr, ErrValuePtrIsNotSettable)
	}
	return v.Elem(), nil
}

// NilPayloadConverter converts nil values (encoding binary/null).
type NilPayloadConverter struct{}

// NewNilPayloadConverter returns the converter of nil values.
func NewNilPayloadConverter() *NilPayloadConverter { return &NilPayloadConverter{} }

// ToPayload takes nil (and nil pointers, maps, slices, …).
func (*NilPayloadConverter) ToPayload(value any) (*common.Payload, error) {
	if isNil(value) {
		return newPayload(nil, MetadataEncodingNil), nil
	}
	return nil, nil
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Chan, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// FromPayload sets *valuePtr to its zero value.
func (*NilPayloadConverter) FromPayload(_ *common.Payload, valuePtr any) error {
	v, err := settable(valuePtr)
	if err != nil {
		return err
	}
	v.SetZero()
	return nil
}

// ToString returns "nil".
func (*NilPayloadConverter) ToString(*common.Payload) string { return "nil" }

// Encoding returns MetadataEncodingNil.
func (*NilPayloadConverter) Encoding() string { return MetadataEncodingNil }

// ByteSlicePayloadConverter converts []byte values as they are (encoding
// binary/plain).
type ByteSlicePayloadConverter struct{}

// NewByteSlicePayloadConverter returns the converter of []byte values.
func NewByteSlicePayloadConverter() *ByteSlicePayloadConverter { return &ByteSlicePayloadConverter{} }

// ToPayload takes a []byte (not a named type like json.RawMessage).
func (*ByteSlicePayloadConverter) ToPayload(value any) (*common.Payload, error) {
	if b, ok := value.([]byte); ok {
		return newPayload(b, MetadataEncodingBinary), nil
	}
	return nil, nil
}

// FromPayload sets *valuePtr (a []byte, or an interface) to the data.
func (*ByteSlicePayloadConverter) FromPayload(payload *common.Payload, valuePtr any) error {
	v, err := settable(valuePtr)
	if err != nil {
		return err
	}
	data := reflect.ValueOf(payload.GetData())
	switch {
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		v.SetBytes(payload.GetData())
	case v.Kind() == reflect.Interface && data.Type().AssignableTo(v.Type()):
		v.Set(data)
	default:
		return fmt.Errorf("binary payload into %T: %w", valuePtr, ErrUnableToDecode)
	}
	return nil
}

// ToString returns the data in base64.
func (*ByteSlicePayloadConverter) ToString(payload *common.Payload) string {
	return base64.StdEncoding.EncodeToString(payload.GetData())
}

// Encoding returns MetadataEncodingBinary.
func (*ByteSlicePayloadConverter) Encoding() string { return MetadataEncodingBinary }

// JSONPayloadConverter converts any value as JSON (encoding json/plain).
type JSONPayloadConverter struct{}

// NewJSONPayloadConverter returns the JSON converter.
func NewJSONPayloadConverter() *JSONPayloadConverter { return &JSONPayloadConverter{} }

// ToPayload marshals value as JSON.
func (*JSONPayloadConverter) ToPayload(value any) (*common.Payload, error) {
	b, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %T: %w", ErrUnableToEncode, value, err)
	}
	return newPayload(b, MetadataEncodingJSON), nil
}

// FromPayload unmarshals the data into valuePtr.
func (*JSONPayloadConverter) FromPayload(payload *common.Payload, valuePtr any) error {
	if _, err := settable(valuePtr); err != nil {
		return err
	}
	if err := json.Unmarshal(payload.GetData(), valuePtr); err != nil {
		return fmt.Errorf("%w: into %T: %w", ErrUnableToDecode, valuePtr, err)
	}
	return nil
}

// ToString returns the JSON text.
func (*JSONPayloadConverter) ToString(payload *common.Payload) string {
	return string(payload.GetData())
}

// Encoding returns MetadataEncodingJSON.
func (*JSONPayloadConverter) Encoding() string { return MetadataEncodingJSON }

// NewEncodedValue returns payload as an EncodedValue read by dc (the
// default converter when dc is nil).
func NewEncodedValue(payload *common.Payload, dc DataConverter) EncodedValue {
	if dc == nil {
		dc = GetDefaultDataConverter()
	}
	return &encodedValue{p: payload, dc: dc}
}

type encodedValue struct {
	p  *common.Payload
	dc DataConverter
}

func (e *encodedValue) HasValue() bool { return e.p != nil }

func (e *encodedValue) Get(valuePtr any) error {
	if e.p == nil {
		return fmt.Errorf("no value: %w", ErrUnableToDecode)
	}
	return e.dc.FromPayload(e.p, valuePtr)
}

// NewEncodedValues returns payloads as EncodedValues read by dc (the
// default converter when dc is nil).
func NewEncodedValues(payloads *common.Payloads, dc DataConverter) EncodedValues {
	if dc == nil {
		dc = GetDefaultDataConverter()
	}
	return &encodedValues{ps: payloads, dc: dc}
}

type encodedValues struct {
	ps *common.Payloads
	dc DataConverter
}

func (e *encodedValues) HasValues() bool { return len(e.ps.GetPayloads()) > 0 }

func (e *encodedValues) Get(valuePtrs ...any) error {
	if !e.HasValues() {
		return fmt.Errorf("no values: %w", ErrUnableToDecode)
	}
	return e.dc.FromPayloads(e.ps, valuePtrs...)
}
