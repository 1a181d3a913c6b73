package api

import (
	"encoding/json"
	"time"
)

// Search attribute types (SearchAttribute.Type): what values an attribute
// holds and which operators of the list query language apply to it
// (docs/api.md, "Visibility").
const (
	// SearchAttributeKeyword: a string matched whole (=, !=, <, >, IN,
	// STARTS_WITH), at most MaxKeywordBytes bytes.
	SearchAttributeKeyword = "keyword"
	// SearchAttributeText: a longer string (at most MaxTextBytes bytes),
	// matched as a keyword is (no full-text search).
	SearchAttributeText = "text"
	// SearchAttributeInt: a JSON integer (64-bit).
	SearchAttributeInt = "int"
	// SearchAttributeDouble: a JSON number.
	SearchAttributeDouble = "double"
	// SearchAttributeBool: true or false.
	SearchAttributeBool = "bool"
	// SearchAttributeDatetime: an RFC 3339 time, stored in UTC.
	SearchAttributeDatetime = "datetime"
	// SearchAttributeKeywordList: an array of keywords; = and IN match a
	// workflow whose list holds the value.
	SearchAttributeKeywordList = "keyword_list"
)

// SearchAttributeTypes returns every search attribute type.
func SearchAttributeTypes() []string {
	return []string{
		SearchAttributeKeyword, SearchAttributeText, SearchAttributeInt, SearchAttributeDouble,
		SearchAttributeBool, SearchAttributeDatetime, SearchAttributeKeywordList,
	}
}

// Bounds of visibility (docs/api.md).
const (
	// MaxSearchAttributesPerNamespace bounds the registered attributes of
	// one namespace.
	MaxSearchAttributesPerNamespace = 100
	// MaxSearchAttributesPerWorkflow bounds the attributes one workflow
	// holds (in a start request, and in one upsert command).
	MaxSearchAttributesPerWorkflow = 64
	// MaxKeywordBytes bounds a keyword value (and each keyword_list item).
	MaxKeywordBytes = 256
	// MaxTextBytes bounds a text value.
	MaxTextBytes = 4096
	// MaxKeywordListItems bounds a keyword_list value.
	MaxKeywordListItems = 100
	// MaxSearchAttributeBytesPerWorkflow bounds the search attributes of
	// one start request or upsert command together, and those a workflow
	// holds once an upsert is merged, as stored JSON, so
	// that a page of a list (which carries them) stays small: 100
	// workflows at most 4 MiB.
	MaxSearchAttributeBytesPerWorkflow = 40 << 10
	// MaxMemoBytes bounds a memo, as JSON.
	MaxMemoBytes = 32 << 10
	// MaxListQueryBytes bounds the query parameter of a list or count.
	MaxListQueryBytes = 4096
)

// SearchAttribute is a registered search attribute of a namespace.
type SearchAttribute struct {
	// Name is the attribute's name in queries and in workflows'
	// search_attributes: a letter or underscore, then letters, digits or
	// underscores, at most 64 characters; not a built-in attribute's name.
	Name string `json:"name"`
	// Type is keyword, text, int, double, bool, datetime or keyword_list.
	Type string `json:"type"`
	// CreatedAt is when the attribute was registered.
	CreatedAt time.Time `json:"created_at"`
}

// RegisterSearchAttributeRequest is the body of POST /search-attributes.
type RegisterSearchAttributeRequest struct {
	// Name is the attribute's name (see SearchAttribute.Name).
	Name string `json:"name" validate:"required,max=64"`
	// Type is keyword, text, int, double, bool, datetime or keyword_list.
	Type string `json:"type" validate:"required,oneof=keyword text int double bool datetime keyword_list"`
}

// ListSearchAttributesResponse is the answer of GET /search-attributes.
type ListSearchAttributesResponse struct {
	// SearchAttributes are the namespace's attributes, by name (at most
	// MaxSearchAttributesPerNamespace).
	SearchAttributes []SearchAttribute `json:"search_attributes"`
}

// CountWorkflowsResponse is the answer of GET /workflows/count.
type CountWorkflowsResponse struct {
	// Count is the number of workflow instances the query selects.
	Count int64 `json:"count"`
}

// SearchAttributes are a workflow's search attribute values by name, as
// JSON values of the registered types.
type SearchAttributes = map[string]json.RawMessage

// Search attributes a schedule's runs start with, as Temporal's scheduler
// sets them (in the run's WorkflowStarted event and its stored
// attributes; queried like other attributes once registered under these
// names): the schedule's id (a keyword) and the time of the slot the run
// is for (a datetime).
const (
	SearchAttributeScheduledByID      = "TemporalScheduledById"
	SearchAttributeScheduledStartTime = "TemporalScheduledStartTime"
)
