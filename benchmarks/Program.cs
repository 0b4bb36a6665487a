using BenchmarkDotNet.Running;

// Entry point for every benchmark in this assembly: pick with --filter, e.g.
//   dotnet run -c Release --project benchmarks -- --filter '*' --job dry
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
