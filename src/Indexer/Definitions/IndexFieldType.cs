namespace Indexing.Indexer;

/// <summary>How a field's values are taken from JSON and indexed.</summary>
public enum IndexFieldType
{
    /// <summary>Analyzed full text: split into terms, searched by words; cannot be sortable.</summary>
    Text,

    /// <summary>One exact term per value: ids, codes, tags; can be sortable.</summary>
    Keyword,

    /// <summary>A 64-bit integer: integral JSON numbers in range.</summary>
    Long,

    /// <summary>A 64-bit float: any finite JSON number.</summary>
    Double,

    /// <summary>JSON true or false.</summary>
    Bool,
}

// The JSON names of the types, shared by parsing, writing and the canonical form.
internal static class IndexFieldTypes
{
    /// <summary>The allowed names, as error messages list them.</summary>
    public const string AllowedNames = "text, keyword, long, double, bool";

    public static string Name(IndexFieldType type) => type switch
    {
        IndexFieldType.Text => "text",
        IndexFieldType.Keyword => "keyword",
        IndexFieldType.Long => "long",
        IndexFieldType.Double => "double",
        IndexFieldType.Bool => "bool",
        _ => throw new ArgumentOutOfRangeException(nameof(type), type, $"unknown field type {(int)type}; the types are {AllowedNames}."),
    };

    public static bool IsDefined(IndexFieldType type) => type is >= IndexFieldType.Text and <= IndexFieldType.Bool;

    // Exact, case-sensitive: "Text" is refused like any unknown name, so a definition has one spelling.
    public static bool TryParse(string name, out IndexFieldType type)
    {
        switch (name)
        {
            case "text": type = IndexFieldType.Text; return true;
            case "keyword": type = IndexFieldType.Keyword; return true;
            case "long": type = IndexFieldType.Long; return true;
            case "double": type = IndexFieldType.Double; return true;
            case "bool": type = IndexFieldType.Bool; return true;
            default: type = default; return false;
        }
    }
}
