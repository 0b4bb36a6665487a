using System.Text;

using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Util;

namespace Indexing.Indexer;

// Turns one document's extracted values into Lucene fields, reusing Field instances: one mapper
// per indexing thread, each Field set to the next document's value once the previous one was
// added (Lucene copies what it needs during UpdateDocument, so reuse is safe on that thread).
//
// Mapping per field type:
//   text    -> TextField (StandardAnalyzer at write time)
//   keyword -> StringField (one exact term); sortable: + SortedDocValuesField
//   long    -> Int64Field (trie terms at NumericPrecisionStep: range queries); sortable: + NumericDocValuesField
//   double  -> DoubleField (the same); sortable: + DoubleDocValuesField
//   bool    -> StringField "true"/"false"; sortable: + NumericDocValuesField 0/1
// Every document also gets __id (StringField, stored) and __etag (stored, one full-precision term:
// EtagPrecisionStep, and numeric doc values). Large text values (ExtractedFields.LargeText) become a
// TextField over a reader. Multi-valued fields index every value; doc values take one value per
// document in Lucene 4.8, so a sortable field sorts by its first value in document order.
//
// Threading: one thread at a time.
internal sealed class LuceneDocumentMapper
{
    /// <summary>
    /// The precision step of <c>__etag</c>: one full-precision term per document instead of a trie's
    /// 16 (at the default step 4), almost all of them unique. Lucene's documented choice for a numeric
    /// field that is seldom queried by range: <c>__etag</c> ranges still work (the query parser uses
    /// this step), by walking the full-precision terms they cover; verify and hits read the stored
    /// value and the doc values. Indexes written with step 4 hold these terms too, so they answer alike.
    /// </summary>
    public const int EtagPrecisionStep = int.MaxValue;

    /// <summary>
    /// The precision step of long and double fields: 16, four trie terms per value, where Lucene
    /// 4.8's default of 4 writes sixteen (later Lucene versions made 16 their default for 64-bit
    /// values): a quarter of the terms to write per value, which shows in indexing time where
    /// numeric fields are a large part of a document (benchmarks/results/README.md, "Other figures").
    /// The cost is at query time: at each end of a range, up to 2^16 - 1 values at full precision
    /// instead of 15 (only values that exist are visited). The query parser uses this step; indexes
    /// written with step 4 hold every term a step-16 query asks for (shifts 0, 16, 32 and 48 are
    /// multiples of 4), so they answer alike.
    /// </summary>
    public const int NumericPrecisionStep = 16;

    private static readonly FieldType _etagType = NumericType(Int64Field.TYPE_STORED, EtagPrecisionStep);
    private static readonly FieldType _long = NumericType(Int64Field.TYPE_NOT_STORED);
    private static readonly FieldType _storedLong = NumericType(Int64Field.TYPE_STORED);
    private static readonly FieldType _double = NumericType(DoubleField.TYPE_NOT_STORED);
    private static readonly FieldType _storedDouble = NumericType(DoubleField.TYPE_STORED);
    private static readonly UTF8Encoding _utf8 = new(encoderShouldEmitUTF8Identifier: false);

    private readonly FieldSlot[] _slots;
    private readonly StringField _id = new(IndexFieldNames.Id, "", Field.Store.YES);
    private readonly Int64Field _etag = new(IndexFieldNames.Etag, 0, _etagType);
    private readonly NumericDocValuesField _etagValue = new(IndexFieldNames.Etag, 0);
    private readonly List<IIndexableField> _fields = [];

    public LuceneDocumentMapper(IndexDefinition definition)
    {
        _slots = new FieldSlot[definition.Fields.Length];
        for (var i = 0; i < _slots.Length; i++)
        {
            _slots[i] = new FieldSlot(definition.Fields[i]);
        }
    }

    private static StreamReader Utf8Reader(ReadOnlyMemory<byte> utf8)
    {
        // The bytes belong to the extraction buffer's pooled array (ExtractedFields.LargeText).
        if (!System.Runtime.InteropServices.MemoryMarshal.TryGetArray(utf8, out var array))
        {
            throw new InvalidOperationException("large text is expected in an array-backed buffer");
        }

        // No byte order mark detection: the bytes are the value's text, whatever they start with.
        return new StreamReader(new MemoryStream(array.Array!, array.Offset, array.Count, writable: false), _utf8, detectEncodingFromByteOrderMarks: false, bufferSize: 16 << 10);
    }

    private static FieldType NumericType(FieldType of, int precisionStep = NumericPrecisionStep)
    {
        var type = new FieldType(of) { NumericPrecisionStep = precisionStep };
        type.Freeze();
        return type;
    }

    /// <summary>The fields of one document; valid until the next call.</summary>
    public IReadOnlyList<IIndexableField> Map(string id, long etag, ExtractedFields values)
    {
        _fields.Clear();
        _id.SetStringValue(id);
        _etag.SetInt64Value(etag);
        _etagValue.SetInt64Value(etag);
        _fields.Add(_id);
        _fields.Add(_etag);
        _fields.Add(_etagValue);
        for (var field = 0; field < _slots.Length; field++)
        {
            if (values.Count(field) > 0)
            {
                _slots[field].Add(field, values, _fields);
            }
        }

        // Large text values: Lucene analyses them from a reader over their UTF-8 bytes, decoding a
        // block at a time, so no string of the whole value is made (ExtractedFields says which).
        for (var value = 0; value < values.LargeTextCount; value++)
        {
            _fields.Add(new TextField(_slots[values.LargeTextField(value)].Name, Utf8Reader(values.LargeText(value))));
        }

        return _fields;
    }

    // The reusable Field instances of one definition field.
    private sealed class FieldSlot
    {
        private readonly IndexFieldDefinition _field;
        private readonly Field.Store _store;
        private readonly Field? _sortValue;
        private Field[] _pool = [];

        public FieldSlot(IndexFieldDefinition field)
        {
            _field = field;
            Name = field.Name;
            _store = field.Stored ? Field.Store.YES : Field.Store.NO;
            if (field.Sortable)
            {
                _sortValue = field.Type switch
                {
                    IndexFieldType.Keyword => new SortedDocValuesField(field.Name, new BytesRef()),
                    IndexFieldType.Double => new DoubleDocValuesField(field.Name, 0),
                    _ => new NumericDocValuesField(field.Name, 0),
                };
            }
        }

        public string Name { get; }

        public void Add(int field, ExtractedFields values, List<IIndexableField> into)
        {
            var count = values.Count(field);
            if (_pool.Length < count)
            {
                Grow(count);
            }

            switch (_field.Type)
            {
                case IndexFieldType.Text:
                case IndexFieldType.Keyword:
                    var strings = values.Strings(field);
                    for (var i = 0; i < strings.Length; i++)
                    {
                        _pool[i].SetStringValue(strings[i]);
                        into.Add(_pool[i]);
                    }

                    _sortValue?.SetBytesValue(new BytesRef(strings[0]));
                    break;

                case IndexFieldType.Long:
                    var longs = values.Longs(field);
                    for (var i = 0; i < longs.Length; i++)
                    {
                        _pool[i].SetInt64Value(longs[i]);
                        into.Add(_pool[i]);
                    }

                    _sortValue?.SetInt64Value(longs[0]);
                    break;

                case IndexFieldType.Double:
                    var doubles = values.Doubles(field);
                    for (var i = 0; i < doubles.Length; i++)
                    {
                        _pool[i].SetDoubleValue(doubles[i]);
                        into.Add(_pool[i]);
                    }

                    _sortValue?.SetDoubleValue(doubles[0]);
                    break;

                default:
                    var bools = values.Bools(field);
                    for (var i = 0; i < bools.Length; i++)
                    {
                        _pool[i].SetStringValue(bools[i] ? "true" : "false");
                        into.Add(_pool[i]);
                    }

                    _sortValue?.SetInt64Value(bools[0] ? 1 : 0);
                    break;
            }

            if (_sortValue is not null)
            {
                into.Add(_sortValue);
            }
        }

        private void Grow(int count)
        {
            var old = _pool.Length;
            Array.Resize(ref _pool, Math.Max(count, old * 2));
            for (var i = old; i < _pool.Length; i++)
            {
                _pool[i] = _field.Type switch
                {
                    IndexFieldType.Text => new TextField(_field.Name, "", _store),
                    IndexFieldType.Keyword or IndexFieldType.Bool => new StringField(_field.Name, "", _store),
                    IndexFieldType.Long => new Int64Field(_field.Name, 0, _field.Stored ? _storedLong : _long),
                    _ => new DoubleField(_field.Name, 0, _field.Stored ? _storedDouble : _double),
                };
            }
        }
    }
}
