namespace Indexing.Indexer.Tests;

// Builds definition JSON for tests: a valid definition whose parts can be replaced one at a time.
internal static class Definitions
{
    public const string CustomerField =
        """{ "name": "customer", "path": "customer.name", "type": "text" }""";

    public static string Json(string fields = CustomerField, string name = "\"orders-by-customer\"", string collection = "\"orders\"") =>
        $$"""{ "name": {{name}}, "collection": {{collection}}, "fields": [ {{fields}} ] }""";

    public static string WithField(string fieldProperties) =>
        Json($$"""{ {{fieldProperties}} }""");

    /// <summary>Parses a definition with one field of these properties and returns the field.</summary>
    public static IndexFieldDefinition ParseField(string fieldProperties) =>
        IndexDefinition.Parse(WithField(fieldProperties)).Fields[0];

    /// <summary>The only problem of a definition with one field of these properties.</summary>
    public static IndexDefinitionProblem OnlyFieldProblem(string fieldProperties) => OnlyProblem(WithField(fieldProperties));

    /// <summary>Parses and returns the problems, failing if the definition was accepted.</summary>
    public static IReadOnlyList<IndexDefinitionProblem> Problems(string json) =>
        Assert.Throws<IndexDefinitionException>(() => IndexDefinition.Parse(json)).Problems;

    /// <summary>The only problem; fails if there is not exactly one.</summary>
    public static IndexDefinitionProblem OnlyProblem(string json) => Assert.Single(Problems(json));
}
