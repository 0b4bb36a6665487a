using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text.Json;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Server.Admin;

/// <summary>
/// A <c>PUT /admin/prefetch/limits</c> body: which prefetch (all adaptive ones when absent) and the
/// limits to change. A property left out keeps its current value; <c>null</c> removes a cap
/// (<c>maxMegabytesPerSecond</c>, <c>maxConcurrency</c>); the budget can only be changed, never removed.
/// Parsed by hand from a JsonElement because "absent" and "null" mean different things here.
/// </summary>
internal sealed class LimitsChange
{
    public const long MinBudgetBytes = 1L << 20;

    private static readonly string[] _properties = ["prefetch", "maxMegabytesPerSecond", "maxConcurrency", "budget"];

    private bool _setRate;
    private long? _maxBytesPerSecond;
    private bool _setConcurrency;
    private int? _maxConcurrency;
    private long? _budgetBytes;

    private LimitsChange()
    {
    }

    /// <summary>The prefetch to change; null for every adaptive prefetch.</summary>
    public string? Prefetch { get; private set; }

    public static bool TryParse(JsonElement body, [NotNullWhen(true)] out LimitsChange? change, [NotNullWhen(false)] out string? problem)
    {
        change = null;
        if (body.ValueKind != JsonValueKind.Object)
        {
            problem = $"the body is a JSON {body.ValueKind.ToString().ToLowerInvariant()}; it must be an object such as " +
                "{\"maxMegabytesPerSecond\": 50, \"maxConcurrency\": 4, \"budget\": \"128MiB\"}.";
            return false;
        }

        var parsed = new LimitsChange();
        foreach (var property in body.EnumerateObject())
        {
            var value = property.Value;
            switch (property.Name)
            {
                case "prefetch" when value.ValueKind == JsonValueKind.String:
                    parsed.Prefetch = value.GetString();
                    break;
                case "maxMegabytesPerSecond" when value.ValueKind == JsonValueKind.Null:
                    parsed._setRate = true;
                    break;
                case "maxMegabytesPerSecond" when value.ValueKind == JsonValueKind.Number && value.GetDouble() is > 0 and <= 1e9 and var megabytes:
                    parsed._setRate = true;
                    parsed._maxBytesPerSecond = Math.Max(1, (long)Math.Round(megabytes * 1e6));
                    break;
                case "maxConcurrency" when value.ValueKind == JsonValueKind.Null:
                    parsed._setConcurrency = true;
                    break;
                case "maxConcurrency" when value.ValueKind == JsonValueKind.Number && value.TryGetInt32(out var concurrency) && concurrency >= 1:
                    parsed._setConcurrency = true;
                    parsed._maxConcurrency = concurrency;
                    break;
                case "budget" when Budget(value) is { } bytes && bytes >= MinBudgetBytes:
                    parsed._budgetBytes = bytes;
                    break;
                default:
                    problem = Problem(property);
                    return false;
            }
        }

        if (!parsed._setRate && !parsed._setConcurrency && parsed._budgetBytes is null)
        {
            problem = "the body changes nothing; set at least one of \"maxMegabytesPerSecond\", \"maxConcurrency\" or \"budget\".";
            return false;
        }

        change = parsed;
        problem = null;
        return true;
    }

    /// <summary><paramref name="current"/> with this change applied.</summary>
    public PrefetchLimits Apply(PrefetchLimits current) => current with
    {
        BudgetBytes = _budgetBytes ?? current.BudgetBytes,
        MaxConcurrency = _setConcurrency ? _maxConcurrency : current.MaxConcurrency,
        MaxBytesPerSecond = _setRate ? _maxBytesPerSecond : current.MaxBytesPerSecond,
    };

    private static long? Budget(JsonElement value) => value.ValueKind switch
    {
        JsonValueKind.String when ByteSize.TryParse(value.GetString(), out var bytes) => bytes,
        JsonValueKind.Number when value.TryGetInt64(out var bytes) => bytes,
        _ => null,
    };

    private static string Problem(JsonProperty property)
    {
        var shown = MessageText.Quote(property.Value.GetRawText());
        return property.Name switch
        {
            "prefetch" => $"\"prefetch\" is {shown}; it must be the name of a running prefetch (a string), or left out for every adaptive one.",
            "maxMegabytesPerSecond" => $"\"maxMegabytesPerSecond\" is {shown}; it must be a number of decimal MB per second above 0 " +
                "(at most 1e9), or null for no cap.",
            "maxConcurrency" => $"\"maxConcurrency\" is {shown}; it must be a whole number of at least 1, or null for the controller's maximum.",
            "budget" => $"\"budget\" is {shown}; it must be a size of at least {ByteSize.Format(MinBudgetBytes)}, as bytes (134217728) or text (\"128MiB\").",
            _ => string.Create(CultureInfo.InvariantCulture,
                $"unknown property {MessageText.Quote(property.Name)}; the body may have {string.Join(", ", _properties.Select(p => "\"" + p + "\""))}."),
        };
    }
}
