// Package searchattr holds typed search attributes in the shapes of
// Temporal's temporal package (SearchAttributeKeyString, SearchAttributes,
// …), which package sdk/temporal aliases, and their conversion to Tether's
// search attribute values by name.
package searchattr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/tetherhq/tether/sdk/enums"
)

// Key is a typed search attribute key (Temporal's SearchAttributeKey).
type Key interface {
	// GetName returns the attribute's name.
	GetName() string
	// GetValueType returns the attribute's type.
	GetValueType() enums.IndexedValueType
	// isKey closes the interface to this package's key types.
	isKey()
}

// Update sets or unsets one attribute of a SearchAttributes (Temporal's
// SearchAttributeUpdate).
type Update func(*SearchAttributes)

// baseKey is the name and the type of a key.
type baseKey struct {
	name string
	typ  enums.IndexedValueType
}

// GetName returns the attribute's name.
func (k baseKey) GetName() string { return k.name }

// GetValueType returns the attribute's type.
func (k baseKey) GetValueType() enums.IndexedValueType { return k.typ }

func (baseKey) isKey() {}

// unset is the update removing k.
func unset(k Key) Update {
	return func(sa *SearchAttributes) { sa.put(k, nil) }
}

// KeyString is a key of a text attribute.
type KeyString struct{ baseKey }

// NewKeyString returns the key of the text attribute name.
func NewKeyString(name string) KeyString {
	return KeyString{baseKey{name, enums.INDEXED_VALUE_TYPE_TEXT}}
}

// ValueSet returns the update setting the attribute to v.
func (k KeyString) ValueSet(v string) Update { return func(sa *SearchAttributes) { sa.put(k, v) } }

// ValueUnset returns the update removing the attribute.
func (k KeyString) ValueUnset() Update { return unset(k) }

// KeyKeyword is a key of a keyword attribute.
type KeyKeyword struct{ baseKey }

// NewKeyKeyword returns the key of the keyword attribute name.
func NewKeyKeyword(name string) KeyKeyword {
	return KeyKeyword{baseKey{name, enums.INDEXED_VALUE_TYPE_KEYWORD}}
}

// ValueSet returns the update setting the attribute to v.
func (k KeyKeyword) ValueSet(v string) Update { return func(sa *SearchAttributes) { sa.put(k, v) } }

// ValueUnset returns the update removing the attribute.
func (k KeyKeyword) ValueUnset() Update { return unset(k) }

// KeyInt64 is a key of an int attribute.
type KeyInt64 struct{ baseKey }

// NewKeyInt64 returns the key of the int attribute name.
func NewKeyInt64(name string) KeyInt64 {
	return KeyInt64{baseKey{name, enums.INDEXED_VALUE_TYPE_INT}}
}

// ValueSet returns the update setting the attribute to v.
func (k KeyInt64) ValueSet(v int64) Update { return func(sa *SearchAttributes) { sa.put(k, v) } }

// ValueUnset returns the update removing the attribute.
func (k KeyInt64) ValueUnset() Update { return unset(k) }

// KeyFloat64 is a key of a double attribute.
type KeyFloat64 struct{ baseKey }

// NewKeyFloat64 returns the key of the double attribute name.
func NewKeyFloat64(name string) KeyFloat64 {
	return KeyFloat64{baseKey{name, enums.INDEXED_VALUE_TYPE_DOUBLE}}
}

// ValueSet returns the update setting the attribute to v.
func (k KeyFloat64) ValueSet(v float64) Update { return func(sa *SearchAttributes) { sa.put(k, v) } }

// ValueUnset returns the update removing the attribute.
func (k KeyFloat64) ValueUnset() Update { return unset(k) }

// KeyBool is a key of a bool attribute.
type KeyBool struct{ baseKey }

// NewKeyBool returns the key of the bool attribute name.
func NewKeyBool(name string) KeyBool {
	return KeyBool{baseKey{name, enums.INDEXED_VALUE_TYPE_BOOL}}
}

// ValueSet returns the update setting the attribute to v.
func (k KeyBool) ValueSet(v bool) Update { return func(sa *SearchAttributes) { sa.put(k, v) } }

// ValueUnset returns the update removing the attribute.
func (k KeyBool) ValueUnset() Update { return unset(k) }

// KeyTime is a key of a datetime attribute.
type KeyTime struct{ baseKey }

// NewKeyTime returns the key of the datetime attribute name.
func NewKeyTime(name string) KeyTime {
	return KeyTime{baseKey{name, enums.INDEXED_VALUE_TYPE_DATETIME}}
}

// ValueSet returns the update setting the attribute to v.
func (k KeyTime) ValueSet(v time.Time) Update { return func(sa *SearchAttributes) { sa.put(k, v) } }

// ValueUnset returns the update removing the attribute.
func (k KeyTime) ValueUnset() Update { return unset(k) }

// KeyKeywordList is a key of a keyword list attribute.
type KeyKeywordList struct{ baseKey }

// NewKeyKeywordList returns the key of the keyword list attribute name.
func NewKeyKeywordList(name string) KeyKeywordList {
	return KeyKeywordList{baseKey{name, enums.INDEXED_VALUE_TYPE_KEYWORD_LIST}}
}

// ValueSet returns the update setting the attribute to v (copied).
func (k KeyKeywordList) ValueSet(v []string) Update {
	v = slices.Clone(v)
	return func(sa *SearchAttributes) { sa.put(k, v) }
}

// ValueUnset returns the update removing the attribute.
func (k KeyKeywordList) ValueUnset() Update { return unset(k) }

// SearchAttributes is an immutable set of typed attribute values
// (Temporal's temporal.SearchAttributes). The zero value is empty.
type SearchAttributes struct {
	// values holds each key's value; nil marks an unset key (an update
	// that removes the attribute).
	values map[Key]any
}

// New returns the attributes the updates set.
func New(updates ...Update) SearchAttributes {
	sa := SearchAttributes{values: map[Key]any{}}
	for _, u := range updates {
		u(&sa)
	}
	return sa
}

// put records v (nil: unset) for k.
func (sa *SearchAttributes) put(k Key, v any) {
	if sa.values == nil {
		sa.values = map[Key]any{}
	}
	sa.values[k] = v
}

// get returns k's value when it is set.
func (sa SearchAttributes) get(k Key) (any, bool) {
	v, ok := sa.values[k]
	if !ok {
		return sa.byName(k)
	}
	return v, v != nil
}

// GetString returns the value of a text attribute.
func (sa SearchAttributes) GetString(k KeyString) (string, bool) {
	v, ok := sa.get(k)
	s, _ := v.(string)
	return s, ok
}

// GetKeyword returns the value of a keyword attribute.
func (sa SearchAttributes) GetKeyword(k KeyKeyword) (string, bool) {
	v, ok := sa.get(k)
	s, _ := v.(string)
	return s, ok
}

// GetInt64 returns the value of an int attribute.
func (sa SearchAttributes) GetInt64(k KeyInt64) (int64, bool) {
	v, ok := sa.get(k)
	n, _ := v.(int64)
	return n, ok
}

// GetFloat64 returns the value of a double attribute.
func (sa SearchAttributes) GetFloat64(k KeyFloat64) (float64, bool) {
	v, ok := sa.get(k)
	f, _ := v.(float64)
	return f, ok
}

// GetBool returns the value of a bool attribute.
func (sa SearchAttributes) GetBool(k KeyBool) (bool, bool) {
	v, ok := sa.get(k)
	b, _ := v.(bool)
	return b, ok
}

// GetTime returns the value of a datetime attribute.
func (sa SearchAttributes) GetTime(k KeyTime) (time.Time, bool) {
	v, ok := sa.get(k)
	t, _ := v.(time.Time)
	return t, ok
}

// GetKeywordList returns the value of a keyword list attribute (a copy).
func (sa SearchAttributes) GetKeywordList(k KeyKeywordList) ([]string, bool) {
	v, ok := sa.get(k)
	l, _ := v.([]string)
	return slices.Clone(l), ok
}

// ContainsKey reports whether k is set.
func (sa SearchAttributes) ContainsKey(k Key) bool {
	_, ok := sa.get(k)
	return ok
}

// Size returns the number of set attributes.
func (sa SearchAttributes) Size() int {
	n := 0
	for _, v := range sa.values {
		if v != nil {
			n++
		}
	}
	return n
}

// GetUntypedValues returns the set attributes' values by key.
func (sa SearchAttributes) GetUntypedValues() map[Key]any {
	out := make(map[Key]any, len(sa.values))
	for k, v := range sa.values {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// Copy returns a copy of sa.
func (sa SearchAttributes) Copy() SearchAttributes {
	return SearchAttributes{values: maps.Clone(sa.values)}
}

// Updates returns, by name, each key's value as Tether's search attribute
// values take it (string, int64, float64, bool, time.Time, []string), and
// nil for an unset key.
func (sa SearchAttributes) Updates() map[string]any {
	out := make(map[string]any, len(sa.values))
	for k, v := range sa.values {
		out[k.GetName()] = v
	}
	return out
}

// Map returns the set attributes by name, as Tether's search attribute
// values take them. Two keys of one name are an error.
func (sa SearchAttributes) Map() (map[string]any, error) {
	out := make(map[string]any, len(sa.values))
	for k, v := range sa.values {
		if v == nil {
			continue
		}
		if _, dup := out[k.GetName()]; dup {
			return nil, fmt.Errorf("search attribute %s is set by two keys of different types", k.GetName())
		}
		out[k.GetName()] = v
	}
	return out, nil
}

// FromJSON returns the attributes of a workflow's search attribute values
// by name, as Tether stores them (JSON; datetimes as RFC 3339 strings):
// each value under a key of the type its JSON suggests (a string a
// keyword, an integral number an int, another number a double, a bool a
// bool, an array a keyword list). A getter for another key of the same
// name converts the value when it can (a keyword to text or a datetime, an
// int to a double), so GetTime and GetString work on what was stored.
func FromJSON(raw map[string]json.RawMessage) SearchAttributes {
	sa := SearchAttributes{values: make(map[Key]any, len(raw))}
	for name, r := range raw {
		var v any
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if d.Decode(&v) != nil {
			continue
		}
		switch x := v.(type) {
		case string:
			sa.values[NewKeyKeyword(name)] = x
		case bool:
			sa.values[NewKeyBool(name)] = x
		case json.Number:
			if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
				sa.values[NewKeyInt64(name)] = i
			} else if f, err := x.Float64(); err == nil {
				sa.values[NewKeyFloat64(name)] = f
			}
		case []any:
			l := make([]string, 0, len(x))
			for _, e := range x {
				if s, ok := e.(string); ok {
					l = append(l, s)
				}
			}
			sa.values[NewKeyKeywordList(name)] = l
		}
	}
	return sa
}

// byName returns the value of another key named as k, converted to k's
// type when it can be.
func (sa SearchAttributes) byName(k Key) (any, bool) {
	for other, v := range sa.values {
		if other.GetName() != k.GetName() || v == nil {
			continue
		}
		switch k.GetValueType() {
		case enums.INDEXED_VALUE_TYPE_TEXT, enums.INDEXED_VALUE_TYPE_KEYWORD:
			if s, ok := v.(string); ok {
				return s, true
			}
		case enums.INDEXED_VALUE_TYPE_DATETIME:
			switch x := v.(type) {
			case string:
				if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
					return t, true
				}
			case time.Time:
				return x, true
			}
		case enums.INDEXED_VALUE_TYPE_DOUBLE:
			switch x := v.(type) {
			case int64:
				return float64(x), true
			case float64:
				return x, true
			}
		case enums.INDEXED_VALUE_TYPE_INT:
			if f, ok := v.(float64); ok && f == float64(int64(f)) {
				return int64(f), true
			}
		case enums.INDEXED_VALUE_TYPE_KEYWORD_LIST:
			if s, ok := v.(string); ok {
				return []string{s}, true
			}
		}
	}
	return nil, false
}
