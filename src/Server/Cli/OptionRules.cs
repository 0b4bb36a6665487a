using System.CommandLine;
using Indexing.Storage;

namespace Indexing.Server.Cli;

// Validators the commands share, and the options two commands share; each error names the option, the value and the rule.
internal static class OptionRules
{
    /// <summary>
    /// <c>--indexing-threads N</c> (demo and measure): threads adding documents to the index during a
    /// build (<see cref="Indexer.IndexOptions.IndexingThreads"/>, 1..16).
    /// </summary>
    public static Option<int> IndexingThreads()
    {
        var option = new Option<int>("--indexing-threads")
        {
            Description = $"Threads indexing during a build (1-16), each at nice {Indexer.IndexOptions.DefaultIndexingThreadNice} below the request threads; " +
                "more than the cores left free only adds contention.",
            DefaultValueFactory = _ => Indexer.IndexOptions.DefaultIndexingThreads,
        };
        InRange(option, 1, 16);
        return option;
    }

    /// <summary>The value must be from <paramref name="min"/> to <paramref name="max"/>; <paramref name="note"/> is added to the message.</summary>
    public static void InRange(Option<int> option, int min, int max, string? note = null) => option.Validators.Add(result =>
    {
        var value = result.GetValueOrDefault<int>();
        if (value < min || value > max)
        {
            result.AddError(RangeMessage(option, value, min, max, note));
        }
    });

    /// <summary>When given, the value must be from <paramref name="min"/> to <paramref name="max"/>.</summary>
    public static void InRange(Option<int?> option, int min, int max) => option.Validators.Add(result =>
    {
        if (result.GetValueOrDefault<int?>() is { } value && (value < min || value > max))
        {
            result.AddError(RangeMessage(option, value, min, max, note: null));
        }
    });

    /// <summary>When given, the value must be a finite number above 0 (or 0 too, with <paramref name="allowZero"/>).</summary>
    public static void Positive(Option<double?> option, bool allowZero = false) => option.Validators.Add(result =>
    {
        if (result.GetValueOrDefault<double?>() is { } value && (!double.IsFinite(value) || value < 0 || (value == 0 && !allowZero)))
        {
            result.AddError($"{option.Name} is {value}; it must be a {(allowZero ? "non-negative" : "positive")} number.");
        }
    });

    /// <summary>The value must be a finite number above 0 (or 0 too, with <paramref name="allowZero"/>).</summary>
    public static void Positive(Option<double> option, bool allowZero = false) => option.Validators.Add(result =>
    {
        var value = result.GetValueOrDefault<double>();
        if (!double.IsFinite(value) || value < 0 || (value == 0 && !allowZero))
        {
            result.AddError($"{option.Name} is {value}; it must be a {(allowZero ? "non-negative" : "positive")} number.");
        }
    });

    /// <summary>The value must be a size (<see cref="ByteSize.TryParse"/>) from <paramref name="min"/> to <paramref name="max"/> bytes (no upper bound at long.MaxValue).</summary>
    public static void Size(Option<string> option, long min, long max, string examples) => option.Validators.Add(result =>
    {
        var text = result.GetValueOrDefault<string>();
        if (!ByteSize.TryParse(text, out var bytes) || bytes < min || bytes > max)
        {
            var range = max == long.MaxValue ? $"of at least {ByteSize.FormatExact(min)}" : $"from {ByteSize.FormatExact(min)} to {ByteSize.FormatExact(max)}";
            result.AddError($"{option.Name} {MessageText.Quote(text)} is not a size {range}; write it like {examples}.");
        }
    });

    private static string RangeMessage(Option option, int value, int min, int max, string? note) =>
        $"{option.Name} is {value}; it must be from {min} to {max}{(note is null ? "" : $" ({note})")}.";
}
