using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Measurement.Measure;

// What the command prints between its steps: the load, the collection and its sizes, the definition.
public sealed partial class MeasureRunner
{
    private const int ListedFields = 20;

    private void ReportLoad(LoadOutcome load)
    {
        var result = load.Result;
        var seconds = Math.Max(load.Elapsed.TotalSeconds, 1e-9);
        _console.MarkupLineInterpolated(
            $"Loaded {result.Stored:N0} documents ({ByteSize.Format(result.Bytes)}) from {result.Lines:N0} lines in {load.Elapsed.TotalSeconds:0.0} s ({load.FileBytes / 1e6 / seconds:0} MB/s of file); [{(result.Failed == 0 ? "green" : "yellow")}]{result.Failed:N0} bad lines skipped[/]");
        foreach (var error in result.Errors.Take(ListedLoadErrors))
        {
            _console.MarkupLineInterpolated($"  [yellow]line {error.Line}[/] ({error.Rule}): {error.Message}");
        }

        if (result.Failed > ListedLoadErrors)
        {
            _console.MarkupLineInterpolated(
                $"  ... and {result.Failed - ListedLoadErrors:N0} more bad lines; the first {result.Errors.Count:N0} are listed in {_settings.JsonFile}.");
        }
    }

    // Ids are taken as given: a later line with an id already loaded replaces that document, as a put does.
    private void ReportReplaced(LoadOutcome load, CollectionCensus census)
    {
        var replaced = load.Result.Stored - census.Documents;
        if (replaced > 0)
        {
            _console.MarkupLineInterpolated(
                $"[yellow]{replaced:N0} {(replaced == 1 ? "line had" : "lines had")} the id of an earlier line[/] and replaced its document (as a put does); the store holds {census.Documents:N0} documents.");
        }
    }

    private void ReportCollection(CollectionCensus census, CollectionCount collection, SizeProfile profile)
    {
        if (census.Collections.Count > 1 || census.WithoutCollection > 0)
        {
            var others = census.Collections.Count - 1;
            _console.MarkupLineInterpolated(
                $"The store holds {census.Documents:N0} documents in {census.Collections.Count:N0} collections{(census.WithoutCollection > 0 ? $" (and {census.WithoutCollection:N0} without one)" : "")}; measuring [bold]{collection.Name}[/]{(_settings.Collection is null && _settings.DefinitionFile is null && others > 0 ? " (the largest; choose with --collection)" : "")}.");
        }

        _console.MarkupLineInterpolated($"[bold]Document sizes of {collection.Name}[/] (in key order, as a rebuild reads them):");
        _console.WriteLine(profile.ToString());
    }

    private void ReportDefinition(IndexDefinition definition, StringFieldSurvey? survey)
    {
        if (survey is null)
        {
            _console.MarkupLineInterpolated($"Index definition from {_settings.DefinitionFile}: {definition}");
            return;
        }

        _console.MarkupLineInterpolated(
            $"Default index definition: every string field of {definition.Collection} as text, {definition.Fields.Length} fields ({survey.DocumentsByPath.Count:N0} string paths found in {survey.Documents:N0} documents):");
        var table = new Table().Border(TableBorder.Simple).AddColumns("field", "path", "documents with a string there");
        foreach (var field in definition.Fields.Take(ListedFields))
        {
            var documents = survey.DocumentsByPath[field.Path];
            table.AddRow(Markup.Escape(field.Name), Markup.Escape(field.Path), $"{documents:N0} ({100.0 * documents / survey.Documents:0.#}%)");
        }

        _console.Write(table);
        if (definition.Fields.Length > ListedFields)
        {
            _console.MarkupLineInterpolated($"  ... and {definition.Fields.Length - ListedFields:N0} more fields; the whole definition is in {_settings.JsonFile}.");
        }

        if (survey.DocumentsByPath.Count > definition.Fields.Length)
        {
            _console.MarkupLineInterpolated(
                $"  [yellow]{survey.DocumentsByPath.Count - definition.Fields.Length:N0} rarer string paths are not indexed[/] (at most {StringFieldSurvey.DefaultMaxFields:N0} fields); write a definition file to choose.");
        }

        if (survey.UnspellableProperties > 0 || survey.UntrackedStrings > 0)
        {
            _console.MarkupLineInterpolated(
                $"  [yellow]not indexed:[/] {survey.UnspellableProperties:N0} properties whose names a path cannot spell ('.', '[[', ']]', control characters, spaces at either end, escaped lone surrogates), {survey.UntrackedStrings:N0} strings at new paths while {StringFieldSurvey.MaxTrackedPaths:N0} paths were already tracked.");
        }
    }
}
