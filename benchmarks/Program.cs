using BenchmarkDotNet.Running;

// Entry point for every benchmark in this assembly: pick with --filter, e.g.
//   dotnet run -c Release --project benchmarks -- --filter '*' --job dry
var summaries = BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);

// CI runs the rebuild benchmarks with --job dry: a benchmark that threw, or a config BenchmarkDotNet
// rejected, must fail the job rather than only print an error in the table.
return summaries.Any(s => s.HasCriticalValidationErrors || s.Reports.Any(r => !r.Success)) ? 1 : 0;
