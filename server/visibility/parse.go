// Package visibility is the list query language of GET /workflows?query=
// and the search attributes' values (docs/api.md, "Visibility"): a
// hand-written recursive-descent parser of Temporal's restricted SQL-like
// grammar into an expression tree (Parse), the translation of that tree
// into a WHERE clause of bound parameters over a fixed whitelist of
// columns (Compile), and the validation of attribute values against their
// registered types (Normalize). It imports nothing of Tether but api.
package visibility

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of parentheses in a query.
const MaxDepth = 32

// MaxInValues bounds the values of one IN list.
const MaxInValues = 100

// MaxTerms bounds the comparisons (=, IN, STARTS_WITH, IS NULL, …) of a
// query: each is a condition PostgreSQL evaluates on every row the list
// reads.
const MaxTerms = 32

// MaxValues bounds the values of a query, its IN lists' together.
const MaxValues = 200

// Error is a query or value that is not accepted: Field names the request
// field ("query", "search_attributes.CustomerId"), Pos the byte offset in
// the query where the problem is (-1: none).
type Error struct {
	// Field is the request field at fault.
	Field string
	// Pos is the byte offset in the query (-1 when not a query error).
	Pos int
	// Msg says what is wrong.
	Msg string
}

// Error is "field: at position N: msg".
func (e *Error) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("%s: at position %d: %s", e.Field, e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Msg)
}

// Message is the error without its field, for a problem document's
// per-field message.
func (e *Error) Message() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("at position %d: %s", e.Pos, e.Msg)
	}
	return e.Msg
}

// Query is a parsed list query.
type Query struct {
	// Where is the filter (nil: every workflow).
	Where Expr
	// Asc orders by StartTime ascending (default: descending).
	Asc bool
}

// Expr is a node of a query's filter: *Binary, *Compare, *In, *StartsWith
// or *IsNull.
type Expr interface{ expr() }

// Binary is "L AND R" or "L OR R".
type Binary struct {
	// Or is true for OR, false for AND.
	Or bool
	// L and R are the operands.
	L, R Expr
}

// Compare is "Attr Op Value"; Op is =, !=, <, <=, > or >=.
type Compare struct {
	// Attr is the attribute compared.
	Attr Ident
	// Op is the operator (<> is read as !=).
	Op string
	// Value is the literal compared with.
	Value Literal
}

// In is "Attr [NOT] IN (v, ...)".
type In struct {
	// Attr is the attribute.
	Attr Ident
	// Not is true for NOT IN.
	Not bool
	// Values are the literals listed.
	Values []Literal
}

// StartsWith is "Attr STARTS_WITH 'prefix'".
type StartsWith struct {
	// Attr is the attribute.
	Attr Ident
	// Prefix is the string literal.
	Prefix Literal
}

// IsNull is "Attr IS [NOT] NULL".
type IsNull struct {
	// Attr is the attribute.
	Attr Ident
	// Not is true for IS NOT NULL.
	Not bool
}

func (*Binary) expr()     {}
func (*Compare) expr()    {}
func (*In) expr()         {}
func (*StartsWith) expr() {}
func (*IsNull) expr()     {}

// Ident is an attribute name and where it stands in the query.
type Ident struct {
	// Name is the attribute's name as written.
	Name string
	// Pos is its byte offset.
	Pos int
}

// Literal kinds.
const (
	// LitString is a quoted string.
	LitString = iota
	// LitNumber is a number (Text holds it as written).
	LitNumber
	// LitBool is TRUE or FALSE.
	LitBool
)

// Literal is a value in a query.
type Literal struct {
	// Kind is LitString, LitNumber or LitBool.
	Kind int
	// Text is the string's value, or the number as written.
	Text string
	// Bool is a LitBool's value.
	Bool bool
	// Pos is its byte offset.
	Pos int
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	text string // identifier / operator / string value / number text
	pos  int
}

type parser struct {
	src   string
	pos   int
	tok   token
	depth int
	// terms and values count the comparisons and values read so far
	// (MaxTerms, MaxValues).
	terms, values int
}

// Parse reads a list query: a filter of comparisons joined by AND and OR
// (AND binds tighter; parentheses group), then an optional ORDER BY
// StartTime [ASC|DESC]. An empty query selects every workflow. Keywords
// are case-insensitive; attribute names are not.
func Parse(src string) (*Query, error) {
	if !utf8.ValidString(src) {
		return nil, &Error{Field: "query", Pos: 0, Msg: "is not valid UTF-8"}
	}
	p := &parser{src: src}
	if err := p.next(); err != nil {
		return nil, err
	}
	q := &Query{}
	if p.tok.kind != tEOF && !p.isKeyword("ORDER") {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		q.Where = e
	}
	if p.isKeyword("ORDER") {
		if err := p.next(); err != nil {
			return nil, err
		}
		if !p.isKeyword("BY") {
			return nil, p.fail("expected BY after ORDER")
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind != tIdent || p.tok.text != "StartTime" {
			return nil, p.fail("only ORDER BY StartTime is supported")
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		switch {
		case p.isKeyword("ASC"):
			q.Asc = true
			if err := p.next(); err != nil {
				return nil, err
			}
		case p.isKeyword("DESC"):
			if err := p.next(); err != nil {
				return nil, err
			}
		}
	}
	if p.tok.kind != tEOF {
		return nil, p.fail("unexpected " + p.describe())
	}
	return q, nil
}

func (p *parser) fail(msg string) error { return &Error{Field: "query", Pos: p.tok.pos, Msg: msg} }

func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "end of query"
	case tString:
		return "string"
	case tNumber:
		return "number " + p.tok.text
	}
	return fmt.Sprintf("%q", p.tok.text)
}

func (p *parser) isKeyword(k string) bool {
	return p.tok.kind == tIdent && strings.EqualFold(p.tok.text, k)
}

func (p *parser) or() (Expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("OR") {
		if err := p.next(); err != nil {
			return nil, err
		}
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &Binary{Or: true, L: l, R: r}
	}
	return l, nil
}

func (p *parser) and() (Expr, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("AND") {
		if err := p.next(); err != nil {
			return nil, err
		}
		r, err := p.primary()
		if err != nil {
			return nil, err
		}
		l = &Binary{L: l, R: r}
	}
	return l, nil
}

var reserved = map[string]bool{"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true,
	"STARTS_WITH": true, "ORDER": true, "BY": true, "ASC": true, "DESC": true, "TRUE": true, "FALSE": true}

func (p *parser) primary() (Expr, error) {
	if p.tok.kind == tLParen {
		p.depth++
		if p.depth > MaxDepth {
			return nil, p.fail(fmt.Sprintf("parentheses nest deeper than %d", MaxDepth))
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.fail("expected ) instead of " + p.describe())
		}
		p.depth--
		return e, p.next()
	}
	if p.tok.kind != tIdent || reserved[strings.ToUpper(p.tok.text)] {
		return nil, p.fail("expected an attribute name instead of " + p.describe())
	}
	if p.terms++; p.terms > MaxTerms {
		return nil, p.fail(fmt.Sprintf("a query holds at most %d comparisons", MaxTerms))
	}
	attr := Ident{Name: p.tok.text, Pos: p.tok.pos}
	if err := p.next(); err != nil {
		return nil, err
	}
	switch {
	case p.tok.kind == tOp:
		op := p.tok.text
		if op == "<>" {
			op = "!="
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		return &Compare{Attr: attr, Op: op, Value: v}, nil
	case p.isKeyword("NOT") || p.isKeyword("IN"):
		not := p.isKeyword("NOT")
		if not {
			if err := p.next(); err != nil {
				return nil, err
			}
			if !p.isKeyword("IN") {
				return nil, p.fail("expected IN after NOT")
			}
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind != tLParen {
			return nil, p.fail("expected ( after IN")
		}
		in := &In{Attr: attr, Not: not}
		for {
			if err := p.next(); err != nil {
				return nil, err
			}
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			if len(in.Values) == MaxInValues {
				return nil, &Error{Field: "query", Pos: v.Pos, Msg: fmt.Sprintf("IN lists at most %d values", MaxInValues)}
			}
			in.Values = append(in.Values, v)
			if p.tok.kind == tRParen {
				return in, p.next()
			}
			if p.tok.kind != tComma {
				return nil, p.fail("expected , or ) instead of " + p.describe())
			}
		}
	case p.isKeyword("STARTS_WITH"):
		if err := p.next(); err != nil {
			return nil, err
		}
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		if v.Kind != LitString {
			return nil, &Error{Field: "query", Pos: v.Pos, Msg: "STARTS_WITH takes a string"}
		}
		return &StartsWith{Attr: attr, Prefix: v}, nil
	case p.isKeyword("IS"):
		if err := p.next(); err != nil {
			return nil, err
		}
		n := &IsNull{Attr: attr}
		if p.isKeyword("NOT") {
			n.Not = true
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		if !p.isKeyword("NULL") {
			return nil, p.fail("expected NULL")
		}
		return n, p.next()
	}
	return nil, p.fail("expected an operator (=, !=, <, <=, >, >=, IN, NOT IN, STARTS_WITH, IS) instead of " + p.describe())
}

func (p *parser) literal() (Literal, error) {
	t := p.tok
	if p.values++; p.values > MaxValues {
		return Literal{}, p.fail(fmt.Sprintf("a query holds at most %d values", MaxValues))
	}
	switch {
	case t.kind == tString:
		return Literal{Kind: LitString, Text: t.text, Pos: t.pos}, p.next()
	case t.kind == tNumber:
		return Literal{Kind: LitNumber, Text: t.text, Pos: t.pos}, p.next()
	case p.isKeyword("TRUE"), p.isKeyword("FALSE"):
		return Literal{Kind: LitBool, Bool: strings.EqualFold(t.text, "TRUE"), Pos: t.pos}, p.next()
	}
	return Literal{}, p.fail("expected a value (a quoted string, a number, TRUE or FALSE) instead of " + p.describe())
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next reads the next token into p.tok.
func (p *parser) next() error {
	s := p.src
	for p.pos < len(s) && (s[p.pos] == ' ' || s[p.pos] == '\t' || s[p.pos] == '\n' || s[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(s) {
		p.tok = token{kind: tEOF, pos: start}
		return nil
	}
	c := s[p.pos]
	switch {
	case isIdentStart(c):
		for p.pos < len(s) && (isIdentStart(s[p.pos]) || isDigit(s[p.pos])) {
			p.pos++
		}
		p.tok = token{kind: tIdent, text: s[start:p.pos], pos: start}
	case c == '`':
		// A backquoted attribute name, as Temporal allows.
		end := strings.IndexByte(s[start+1:], '`')
		if end < 0 {
			return &Error{Field: "query", Pos: start, Msg: "unterminated `name`"}
		}
		p.pos = start + 1 + end + 1
		p.tok = token{kind: tIdent, text: s[start+1 : start+1+end], pos: start}
	case isDigit(c) || ((c == '-' || c == '+' || c == '.') && p.pos+1 < len(s) && (isDigit(s[p.pos+1]) || s[p.pos+1] == '.')):
		p.pos++
		for p.pos < len(s) && (isDigit(s[p.pos]) || s[p.pos] == '.' || s[p.pos] == 'e' || s[p.pos] == 'E' ||
			((s[p.pos] == '-' || s[p.pos] == '+') && (s[p.pos-1] == 'e' || s[p.pos-1] == 'E'))) {
			p.pos++
		}
		p.tok = token{kind: tNumber, text: s[start:p.pos], pos: start}
	case c == '\'' || c == '"':
		var b strings.Builder
		p.pos++
		for {
			if p.pos >= len(s) {
				return &Error{Field: "query", Pos: start, Msg: "unterminated string"}
			}
			ch := s[p.pos]
			switch {
			case ch == 0:
				return &Error{Field: "query", Pos: p.pos, Msg: "a string may not hold a NUL character"}
			case ch == c && p.pos+1 < len(s) && s[p.pos+1] == c: // '' inside '...'
				b.WriteByte(c)
				p.pos += 2
				continue
			case ch == c:
				p.pos++
				p.tok = token{kind: tString, text: b.String(), pos: start}
				return nil
			case ch == '\\' && p.pos+1 < len(s):
				b.WriteByte(s[p.pos+1])
				p.pos += 2
				continue
			}
			b.WriteByte(ch)
			p.pos++
		}
	case c == '(':
		p.pos++
		p.tok = token{kind: tLParen, text: "(", pos: start}
	case c == ')':
		p.pos++
		p.tok = token{kind: tRParen, text: ")", pos: start}
	case c == ',':
		p.pos++
		p.tok = token{kind: tComma, text: ",", pos: start}
	case c == '=':
		p.pos++
		p.tok = token{kind: tOp, text: "=", pos: start}
	case c == '!' || c == '<' || c == '>':
		p.pos++
		op := string(c)
		if p.pos < len(s) && (s[p.pos] == '=' || (c == '<' && s[p.pos] == '>')) {
			op += string(s[p.pos])
			p.pos++
		}
		if op == "!" {
			return &Error{Field: "query", Pos: start, Msg: "expected != "}
		}
		p.tok = token{kind: tOp, text: op, pos: start}
	default:
		r, _ := utf8.DecodeRuneInString(s[start:])
		return &Error{Field: "query", Pos: start, Msg: fmt.Sprintf("unexpected character %q", r)}
	}
	return nil
}
