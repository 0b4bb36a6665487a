namespace Indexing.Indexer.Tests;

public sealed class IndexDefinitionHashTests
{
    private const string Base = """
        { "name": "orders-by-customer", "collection": "orders", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "total", "path": "total", "type": "double", "stored": true, "sortable": true }
        ] }
        """;

    // Changing this value means the canonical form changed: every existing index would then
    // report a different hash on open and be rebuilt. Only change it on purpose, together with
    // IndexDefinition.CanonicalFormVersion. (It is the SHA-256 of the text CanonicalForm_FixedDefinition
    // asserts, so `printf` that text into sha256sum to check it by hand.)
    private const string BaseHash = "82e4b9e2405f3c9974c7b20db0075a627f731724cb385d4142539dc859bdb820";

    [Fact]
    public void DefinitionHash_FixedDefinition_IsTheRecordedValue()
    {
        Assert.Equal(BaseHash, IndexDefinition.Parse(Base).DefinitionHash);
    }

    [Fact]
    public void DefinitionHash_Always_Is64LowercaseHexCharacters()
    {
        var hash = IndexDefinition.Parse(Base).DefinitionHash;

        Assert.Matches("^[0-9a-f]{64}$", hash);
    }

    [Fact]
    public void CanonicalForm_FixedDefinition_WritesDefaultsAndSortsFields()
    {
        var canonical = IndexDefinition.Parse(Base).CanonicalForm();

        Assert.Equal(
            "index-definition 1\n" +
            "collection 6:orders\n" +
            "field 8:customer\npath 13:customer.name\ntype text\nstored false\nsortable false\n" +
            "field 5:total\npath 5:total\ntype double\nstored true\nsortable true\n",
            canonical);
    }

    public static TheoryData<string> CosmeticVariants => new()
    {
        // Whitespace.
        """{"name":"orders-by-customer","collection":"orders","fields":[{"name":"customer","path":"customer.name","type":"text"},{"name":"total","path":"total","type":"double","stored":true,"sortable":true}]}""",
        // Property order, and defaults written out.
        """
        { "fields": [
            { "type": "text", "sortable": false, "stored": false, "path": "customer.name", "name": "customer" },
            { "sortable": true, "stored": true, "type": "double", "path": "total", "name": "total" }
          ], "collection": "orders", "name": "orders-by-customer" }
        """,
        // Field order.
        """
        { "name": "orders-by-customer", "collection": "orders", "fields": [
          { "name": "total", "path": "total", "type": "double", "stored": true, "sortable": true },
          { "name": "customer", "path": "customer.name", "type": "text" }
        ] }
        """,
        // Another name: the name is not part of the hash.
        Base.Replace("orders-by-customer", "orders-by-customer-v2", StringComparison.Ordinal),
    };

    [Theory]
    [MemberData(nameof(CosmeticVariants))]
    public void DefinitionHash_CosmeticVariant_IsUnchanged(string variant)
    {
        Assert.Equal(IndexDefinition.Parse(Base).DefinitionHash, IndexDefinition.Parse(variant).DefinitionHash);
    }

    [Theory]
    [InlineData("\"type\": \"text\"", "\"type\": \"keyword\"")]
    [InlineData("\"path\": \"customer.name\"", "\"path\": \"customer.fullName\"")]
    [InlineData("\"path\": \"customer.name\"", "\"path\": \"customer[].name\"")]
    [InlineData("\"path\": \"total\", \"type\": \"double\", \"stored\": true", "\"path\": \"total\", \"type\": \"double\", \"stored\": false")]
    [InlineData("\"sortable\": true", "\"sortable\": false")]
    [InlineData("\"collection\": \"orders\"", "\"collection\": \"invoices\"")]
    [InlineData("\"name\": \"total\"", "\"name\": \"amount\"")]
    [InlineData(", \"sortable\": true }", ", \"sortable\": true }, { \"name\": \"paid\", \"path\": \"paid\", \"type\": \"bool\" }")]
    [InlineData("{ \"name\": \"customer\", \"path\": \"customer.name\", \"type\": \"text\" },", "")]
    public void DefinitionHash_SemanticChange_IsDifferent(string before, string after)
    {
        Assert.Contains(before, Base, StringComparison.Ordinal);
        var changed = Base.Replace(before, after, StringComparison.Ordinal);

        Assert.NotEqual(IndexDefinition.Parse(Base).DefinitionHash, IndexDefinition.Parse(changed).DefinitionHash);
    }

    [Fact]
    public void DefinitionHash_ValuesThatCouldRunTogether_AreKeptApart()
    {
        // Without length prefixes, path "a" + name "bc" and path "ab" + name "c" could read alike.
        var first = IndexDefinition.Create("i", "orders", [new IndexFieldDefinition("bc", "a", IndexFieldType.Keyword)]);
        var second = IndexDefinition.Create("i", "orders", [new IndexFieldDefinition("c", "ab", IndexFieldType.Keyword)]);

        Assert.NotEqual(first.DefinitionHash, second.DefinitionHash);
    }
}
