using System.CommandLine;
using System.CommandLine.Parsing;
using Indexing.Measurement;
using Indexing.Measurement.Measure;
using Indexing.Server.Measure;
using Indexing.Storage;

namespace Indexing.Server.Cli;

// `measure FILE`: load the user's NDJSON into a fresh store, rebuild an index over it with each
// strategy, read it alone (ReadOnly) and measure both bounds, and print and save the comparison
// (Measure/MeasureRunner.cs), and Lucene.Net alone on the same values (LuceneOnly). --modes picks a subset.
internal static class MeasureCommand
{
    public const string LocalDevice = "local";
    public const string NetworkDiskDevice = "network-disk";

    public static Command Create()
    {
        var defaults = RebuildDevice.DefaultNetworkDisk;
        var file = new Argument<FileInfo>("FILE")
        {
            Description = "NDJSON file, one {\"id\": \"collection/key\", \"doc\": {...}} per line (the POST /docs/bulk format). Bad lines are reported and skipped.",
        };
        file.AcceptExistingOnly();
        var definition = new Option<FileInfo>("--definition")
        {
            Description = "Index definition (JSON, as PUT /indexes/{name} takes). Default: every string field of the collection, as text.",
        };
        definition.AcceptExistingOnly();
        var collection = new Option<string?>("--collection")
        {
            Description = "Collection to rebuild (the id part before the first '/'). Default: the definition's, else the one with the most bytes.",
        };
        var device = new Option<string>("--device")
        {
            Description = $"Where the rebuilds read from: '{LocalDevice}' (this disk, with direct reads so the page cache does not hide it) " +
                $"or '{NetworkDiskDevice}' (the same store under a modelled network-attached disk; tune it with the --disk-* options).",
            DefaultValueFactory = _ => LocalDevice,
        };
        device.AcceptOnlyFromAmong(LocalDevice, NetworkDiskDevice);
        var latency = new Option<double?>("--disk-latency-ms")
        {
            Description = $"Modelled disk: fixed cost of every request, in ms (default {defaults.RequestLatency!.Value.TotalMilliseconds:0.#}).",
        };
        var streamMbps = new Option<double?>("--disk-stream-mbps")
        {
            Description = $"Modelled disk: bandwidth of one request stream, in MB/s (default {defaults.StreamBandwidthBytesPerSecond / 1e6:0.#}).",
        };
        var queueDepth = new Option<int?>("--disk-queue-depth")
        {
            Description = $"Modelled disk: requests serviced at once; more wait in line (default {defaults.UsefulQueueDepth}).",
        };
        var deviceMbps = new Option<double?>("--disk-device-mbps")
        {
            Description = "Modelled disk: cap on the whole device's bandwidth, in MB/s, shared by the requests in service (default: none).",
        };
        var modes = new Option<string[]>("--modes")
        {
            Description = $"Strategies and bounds to run, comma-separated (default: all of {string.Join(", ", MeasureResults.Modes)}). " +
                "ReadOnly,BestFixed measures reading alone: the controller against the best fixed L.",
            AllowMultipleArgumentsPerToken = true,
            CustomParser = result => [.. result.Tokens.SelectMany(t => t.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))],
        };
        modes.Validators.Add(result =>
        {
            foreach (var name in result.GetValueOrDefault<string[]>() ?? [])
            {
                if (!Enum.TryParse<RebuildMode>(name, ignoreCase: true, out var mode) || !Enum.IsDefined(mode) || int.TryParse(name, out _))
                {
                    result.AddError($"--modes names {MessageText.Quote(name)}, which is not a mode; use {string.Join(", ", MeasureResults.Modes)}.");
                }
            }
        });
        var repeat = new Option<int>("--repeat")
        {
            Description = "Runs of each strategy and bound; the table reports medians.",
            DefaultValueFactory = _ => 3,
        };
        var json = new Option<FileInfo>("--json")
        {
            Description = "Where to write the results as JSON.",
            DefaultValueFactory = _ => new FileInfo("measure-results.json"),
        };
        var timeline = new Option<FileInfo?>("--timeline")
        {
            Description = "Write the median adaptive run's pressure timeline (every 250 ms) as CSV to this file, and its plot next to it as .svg.",
        };
        var work = new Option<DirectoryInfo>("--work")
        {
            Description = "Work directory for the fresh store and the indexes (must be new, empty, or an earlier measure's); removed afterwards.",
            DefaultValueFactory = _ => new DirectoryInfo("measure-work"),
        };
        var keepStore = new Option<bool>("--keep-store")
        {
            Description = "Keep the loaded store in the work directory afterwards (for serve --data, say).",
        };
        var maxDocumentSize = new Option<string>("--max-document-size")
        {
            Description = "Largest document accepted (the store's Storage:MaxDocumentBytes); larger ones are reported and skipped.",
            DefaultValueFactory = _ => ByteSize.FormatExact(StoreOptions.DefaultMaxDocumentBytes),
        };
        var inMemoryLimit = new Option<string>("--in-memory-limit")
        {
            Description = "Most document bytes the IndexOnly bound holds in memory at once; a larger collection is indexed from memory in chunks of this size.",
            DefaultValueFactory = _ => ByteSize.FormatExact(RebuildWorkload.DefaultInMemoryLimitBytes),
        };

        var indexingThreads = OptionRules.IndexingThreads();
        OptionRules.InRange(repeat, 1, 100);
        OptionRules.Positive(latency, allowZero: true);
        OptionRules.Positive(streamMbps);
        OptionRules.InRange(queueDepth, 1, 4096);
        OptionRules.Positive(deviceMbps);
        OptionRules.Size(maxDocumentSize, StoreOptions.MaxDocumentBytesFloor, StoreOptions.MaxDocumentBytesCeiling, "64MiB or 1GiB");
        OptionRules.Size(inMemoryLimit, 1 << 20, long.MaxValue, "64MiB or 1GiB");
        timeline.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<FileInfo?>() is { } csv && string.Equals(csv.Extension, ".svg", StringComparison.OrdinalIgnoreCase))
            {
                result.AddError($"--timeline {csv.Name} ends in .svg; it names the CSV file, and the plot is written next to it as .svg. Use e.g. --timeline timeline.csv.");
            }
        });

        var command = new Command(
            "measure",
            "Measure an index rebuild on your own documents: load an NDJSON file into a fresh store, rebuild the index with each prefetch strategy " +
            "(Sequential, FixedBatch, Adaptive), reading alone with the controller (ReadOnly) and both bounds (BestFixed: reading at the fastest fixed L; " +
            "IndexOnly), Lucene.Net alone on the same field values (LuceneOnly), and print and save the comparison with the file's size profile.")
        {
            file, definition, collection, device, latency, streamMbps, queueDepth, deviceMbps, modes, repeat, indexingThreads, json, timeline, work, keepStore, maxDocumentSize, inMemoryLimit,
        };
        Option[] diskOptions = [latency, streamMbps, queueDepth, deviceMbps];
        command.Validators.Add(result =>
        {
            // The device's token, not its value: an unknown device has its own error already.
            var deviceName = result.GetResult(device)?.Tokens.SingleOrDefault()?.Value ?? LocalDevice;
            if (deviceName == LocalDevice && diskOptions.FirstOrDefault(o => result.GetResult(o) is { Tokens.Count: > 0 }) is { } given)
            {
                result.AddError($"{given.Name} describes the modelled network disk, but --device is {LocalDevice}; add --device {NetworkDiskDevice} or drop {given.Name}.");
            }
        });
        CommandLine.SetCancellableAction(command, (parse, cancellationToken) =>
        {
            var chosen = parse.GetValue(device) == LocalDevice
                ? RebuildDevice.Local
                : RebuildDevice.ModelledNetworkDisk(
                    parse.GetValue(latency) is { } ms ? TimeSpan.FromMilliseconds(ms) : null,
                    parse.GetValue(streamMbps) is { } mbps ? (long)(mbps * 1e6) : null,
                    parse.GetValue(queueDepth),
                    parse.GetValue(deviceMbps) is { } cap ? (long)(cap * 1e6) : null);
            ByteSize.TryParse(parse.GetValue(maxDocumentSize), out var maxDocumentBytes);
            ByteSize.TryParse(parse.GetValue(inMemoryLimit), out var inMemoryLimitBytes);
            var settings = new MeasureSettings(
                parse.GetValue(file)!.FullName,
                parse.GetValue(definition)?.FullName,
                parse.GetValue(collection),
                chosen,
                parse.GetValue(repeat),
                parse.GetValue(json)!.FullName,
                parse.GetValue(timeline)?.FullName,
                parse.GetValue(work)!.FullName,
                parse.GetValue(keepStore),
                maxDocumentBytes,
                inMemoryLimitBytes,
                parse.GetValue(modes) is { Length: > 0 } chosenModes ? Chosen(chosenModes) : null,
                parse.GetValue(indexingThreads));
            return new MeasureRunner(settings, MeasureFileLoader.LoadAsync).RunAsync(cancellationToken);
        });
        return command;
    }

    // The named modes, each once, in the order the report lists them.
    private static IReadOnlyList<RebuildMode> Chosen(string[] names)
    {
        var chosen = names.Select(n => Enum.Parse<RebuildMode>(n, ignoreCase: true)).ToHashSet();
        return [.. MeasureResults.Modes.Where(chosen.Contains)];
    }
}
