using System.Globalization;

namespace Indexing.Datasets;

// "orders/00000001": the collection, a slash and the 1-based position zero-padded to the spec's
// width, so the store's ordinal key order is generation order across the whole dataset.
internal sealed class IdFormat
{
    private readonly string _collection;
    private readonly string _number;

    public IdFormat(DatasetSpec spec)
    {
        _collection = spec.Collection;
        _number = string.Create(CultureInfo.InvariantCulture, $"D{spec.IdDigits}");
        Digits = spec.IdDigits;
    }

    public int Digits { get; }

    public string Format(long position) =>
        string.Create(_collection.Length + 1 + Digits, (this, position), static (chars, state) =>
        {
            var (format, position) = state;
            format._collection.CopyTo(chars);
            chars[format._collection.Length] = '/';
            (position + 1).TryFormat(chars[(format._collection.Length + 1)..], out _, format._number, CultureInfo.InvariantCulture);
        });
}
