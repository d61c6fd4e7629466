package trace

// Test hooks: exported names that exist only in this package's tests.

// WithKindTable makes a Writer encode with descs and store them as its kind
// table instead of KindTable(): a stand-in for a newer writer.
func WithKindTable(descs []KindDesc) WriterOption {
	return func(o *writerOptions) error {
		o.kinds = descs
		return nil
	}
}

// AppendKindTable encodes descs as the value of the kinds header field,
// unchecked, so tests can make broken tables.
var AppendKindTable = appendKindTable

// TagKinds is the header tag of the kind table.
const TagKinds = tagKinds
