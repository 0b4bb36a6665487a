using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using RocksDbSharp;

namespace Indexing.Storage;

/// <summary>Which build of RocksDB's native library the process runs (<see cref="StoreOptions.NativeLibrary"/>).</summary>
internal enum RocksDbLibrary
{
    /// <summary><c>librocksdb.so</c>: RocksDB built against glibc's malloc (on other systems, the package's only build).</summary>
    Glibc,

    /// <summary>
    /// <c>librocksdb-jemalloc.so</c>: the same RocksDB built with jemalloc support. It needs
    /// <c>libjemalloc.so.2</c> preloaded (<c>LD_PRELOAD</c>), which also makes jemalloc the process's malloc.
    /// </summary>
    Jemalloc,
}

/// <summary>
/// The RocksDB native library and the malloc this process runs with: chosen once, before the first
/// RocksDB call (<see cref="DocumentStore.Open"/> does it), and described for reports.
/// </summary>
/// <remarks>
/// <para>
/// How RocksDbSharp (package RocksDB 11.12) loads its library: the static constructor of
/// <c>RocksDbSharp.Native</c> calls <c>NativeImport.Auto.Import</c>, which dlopens the first file that
/// loads among, on Linux, <c>librocksdb-jemalloc.so</c>, then <c>librocksdb.so</c>, then
/// <c>librocksdb-musl.so</c> (each under the working directory, then the application's directory, in
/// <c>runtimes/linux-x64/native/</c> and a few other folders), and keeps the result in the public static
/// field <c>Native.Instance</c>, through which every call goes. No setting or environment variable picks
/// the file.
/// </para>
/// <para>
/// The jemalloc build needs <c>libjemalloc.so.2</c>, and Debian's cannot be loaded into a running process
/// ("cannot allocate memory in static TLS block"): it loads only when the process started with it
/// preloaded. Preloading is also the only way RocksDB's allocations go to jemalloc at all: a library
/// opened with dlopen resolves <c>malloc</c> to the first definition in the process's global scope,
/// which is glibc's unless jemalloc was preloaded. So the jemalloc build is refused unless jemalloc is
/// the process's malloc, and with it preloaded the package picks the jemalloc build by itself.
/// </para>
/// <para>
/// Selecting: run the package's own loader; if it loaded another file than the one chosen, import the
/// chosen file through the package's public <c>NativeImport.Importers.Import</c> with an importer that
/// loads exactly that file, and put it in <c>Native.Instance</c>. The other file stays mapped, unused.
/// Only before any RocksDB object exists: once one does, the library cannot change.
/// </para>
/// </remarks>
internal static class RocksDbNative
{
    private const string GlibcFile = "librocksdb.so";
    private const string JemallocFile = "librocksdb-jemalloc.so";
    private const string JemallocMallocFile = "libjemalloc.so";

    // <malloc.h>: the mallopt parameter that MALLOC_ARENA_MAX also sets.
    private const int MallocArenaMaxParameter = -8;

    private static readonly Lock _lock = new();
    private static RocksDbLibrary? _selected;
    private static string? _loadedPath;
    private static int? _arenaLimit;
    private static bool _arenasDecided;

    /// <summary>The RocksDB library file every call goes to; null until a store has opened.</summary>
    public static string? LoadedLibraryPath
    {
        get
        {
            lock (_lock)
            {
                return _loadedPath;
            }
        }
    }

    /// <summary>The library chosen for this process; null until a store has opened.</summary>
    public static RocksDbLibrary? Selected
    {
        get
        {
            lock (_lock)
            {
                return _selected;
            }
        }
    }

    /// <summary>Parses a native library name: <c>glibc</c> or <c>jemalloc</c> (any case).</summary>
    public static bool TryParse(string? text, out RocksDbLibrary library)
    {
        switch (text?.Trim().ToLowerInvariant())
        {
            case "glibc":
                library = RocksDbLibrary.Glibc;
                return true;
            case "jemalloc":
                library = RocksDbLibrary.Jemalloc;
                return true;
            default:
                library = default;
                return false;
        }
    }

    /// <summary>The setting's spelling of <paramref name="library"/>.</summary>
    public static string ToName(this RocksDbLibrary library) => library == RocksDbLibrary.Jemalloc ? "jemalloc" : "glibc";

    /// <summary>
    /// The malloc serving this process now, e.g. "jemalloc (/usr/lib/x86_64-linux-gnu/libjemalloc.so.2)"
    /// or "glibc malloc, MALLOC_ARENA_MAX=2": what the process's global symbol lookup finds for <c>malloc</c>.
    /// </summary>
    public static string DescribeMalloc()
    {
        if (ProcessMallocFile() is { } file && Path.GetFileName(file).StartsWith(JemallocMallocFile, StringComparison.Ordinal))
        {
            return $"jemalloc ({file})";
        }

        if (!OperatingSystem.IsLinux())
        {
            return "the system's malloc";
        }

        var arenas = Environment.GetEnvironmentVariable("MALLOC_ARENA_MAX");
        if (!string.IsNullOrEmpty(arenas))
        {
            return $"glibc malloc, MALLOC_ARENA_MAX={arenas}";
        }

        lock (_lock)
        {
            return _arenaLimit is { } limit
                ? $"glibc malloc, arenas limited to {limit} at start (MALLOC_ARENA_MAX unset)"
                : "glibc malloc, MALLOC_ARENA_MAX unset (default: 8 per core)";
        }
    }

    /// <summary>True when <c>malloc</c> in this process is jemalloc's (it was preloaded).</summary>
    public static bool JemallocIsProcessMalloc() =>
        ProcessMallocFile() is { } file && Path.GetFileName(file).StartsWith(JemallocMallocFile, StringComparison.Ordinal);

    /// <summary>
    /// Makes <paramref name="library"/> the RocksDB library of this process, or checks that it already is.
    /// Throws <see cref="InvalidOperationException"/> (naming the setting, what is wrong and what to do)
    /// when it cannot be: jemalloc not preloaded, not Linux x64, or another library already in use.
    /// </summary>
    internal static void Ensure(RocksDbLibrary library)
    {
        lock (_lock)
        {
            if (_selected is { } selected)
            {
                if (selected != library)
                {
                    throw new InvalidOperationException(
                        $"{StoreOptions.NativeLibraryName} is {library.ToName()}, but this process already runs RocksDB from {MessageText.Quote(_loadedPath)} " +
                        $"({selected.ToName()}); the library is chosen once per process, before the first store opens. Use the same setting for every store, or restart.");
                }

                return;
            }

            if (library == RocksDbLibrary.Jemalloc)
            {
                RequireJemalloc();
            }

            var inUseBefore = MappedRocksDbLibrary();
            RuntimeHelpers.RunClassConstructor(typeof(Native).TypeHandle);
            var loaded = NativeImport.Auto.LoadedPath;
            var wanted = library == RocksDbLibrary.Jemalloc ? JemallocFile : GlibcFile;
            if (OperatingSystem.IsLinux() && loaded is not null && !string.Equals(Path.GetFileName(loaded), wanted, StringComparison.Ordinal))
            {
                if (inUseBefore is not null)
                {
                    throw new InvalidOperationException(
                        $"{StoreOptions.NativeLibraryName} is {library.ToName()}, but RocksDB was already in use in this process from {MessageText.Quote(inUseBefore)} " +
                        "before the first store opened; the library can only be chosen before the first RocksDB call. Open the store first, or restart.");
                }

                loaded = Replace(Path.Combine(Path.GetDirectoryName(loaded)!, wanted));
            }

            _selected = library;
            _loadedPath = ServingFile() ?? (loaded is null ? null : Path.GetFullPath(loaded));
        }
    }

    /// <summary>
    /// The file the code behind <c>Native.Instance</c> lives in, asked of the dynamic linker (dladdr)
    /// for one of its function pointers: where RocksDB calls really go, whatever the loader tried.
    /// Null when that cannot be told (not Linux, or no function bound).
    /// </summary>
    internal static string? ServingFile()
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }

        // The generated subclass keeps one delegate per native function; any bound one will do.
        var instance = Native.Instance;
        foreach (var field in instance.GetType().GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic))
        {
            if (field.GetValue(instance) is Delegate bound
                && Marshal.GetFunctionPointerForDelegate(bound) is var address && address != IntPtr.Zero
                && Dl.dladdr(address, out var info) != 0 && info.FileName != IntPtr.Zero)
            {
                return Marshal.PtrToStringUTF8(info.FileName);
            }
        }

        return null;
    }

    /// <summary>
    /// Limits glibc's malloc arenas to <paramref name="max"/> for the rest of the process
    /// (<c>mallopt(M_ARENA_MAX)</c>, what <c>MALLOC_ARENA_MAX</c> sets), unless the environment sets
    /// <c>MALLOC_ARENA_MAX</c> (an operator's choice wins) or jemalloc is the process's malloc. Call it
    /// first thing in a process: glibc gives each new thread an arena of its own until the limit, so the
    /// arenas the runtime's threads made before the call stay. Returns whether the limit was set; the
    /// first call decides. The server starts with one arena per core: memory one arena frees is not
    /// reused by another, so fewer arenas hold less private memory at the same speed; set here it
    /// catches most, not all, of what the environment variable does (docs/decisions/0010;
    /// benchmarks/results/README.md, "Scale and memory").
    /// </summary>
    public static bool LimitGlibcArenas(int max)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(max);
        lock (_lock)
        {
            if (_arenasDecided)
            {
                return _arenaLimit == max;
            }

            _arenasDecided = true;
            if (!OperatingSystem.IsLinux() || !string.IsNullOrEmpty(Environment.GetEnvironmentVariable("MALLOC_ARENA_MAX")) || JemallocIsProcessMalloc())
            {
                return false;
            }

            try
            {
                if (Malloc.mallopt(MallocArenaMaxParameter, max) == 1)
                {
                    _arenaLimit = max;
                }
            }
            catch (EntryPointNotFoundException)
            {
                // Not glibc (musl has no mallopt): no arenas to limit.
            }

            return _arenaLimit == max;
        }
    }

    private static void RequireJemalloc()
    {
        if (!OperatingSystem.IsLinux() || RuntimeInformation.ProcessArchitecture != Architecture.X64)
        {
            throw new InvalidOperationException(
                $"{StoreOptions.NativeLibraryName} is jemalloc, which the RocksDB package ships for Linux x64 only; this is {RuntimeInformation.RuntimeIdentifier}. " +
                $"Leave {StoreOptions.NativeLibraryName} out (glibc) here.");
        }

        if (!JemallocIsProcessMalloc())
        {
            throw new InvalidOperationException(
                $"{StoreOptions.NativeLibraryName} is jemalloc, but jemalloc is not this process's malloc ({DescribeMalloc()}). " +
                "libjemalloc.so.2 cannot be loaded into a running process (it needs static TLS), and without it RocksDB's allocations would still go to glibc: " +
                "start the process with LD_PRELOAD=libjemalloc.so.2 (Debian: apt-get install libjemalloc2), e.g. lab/tools/scale-run.sh jemalloc, " +
                $"or leave {StoreOptions.NativeLibraryName} out for glibc.");
        }
    }

    // Imports `path` through the package's own importer machinery, so the generated Native subclass
    // is the same as its constructor makes; only the file differs.
    private static string Replace(string path)
    {
        if (!NativeLibrary.TryLoad(path, out var handle))
        {
            throw new InvalidOperationException(
                $"{StoreOptions.NativeLibraryName} asks for {MessageText.Quote(path)}, which could not be loaded; the RocksDB package ships it in runtimes/linux-x64/native/. Rebuild, or choose the other library.");
        }

        Native.Instance = NativeImport.Importers.Import<Native>(new OneFileImporter(handle), "rocksdb", "0", suppressUnload: true);
        return path;
    }

    // The librocksdb*.so mapped into this process now, if any (Linux; null elsewhere).
    private static string? MappedRocksDbLibrary() =>
        MappedFiles().FirstOrDefault(f => Path.GetFileName(f).StartsWith("librocksdb", StringComparison.Ordinal));

    // The file holding the `malloc` the process's global symbol lookup finds (where every library's
    // malloc call goes), from /proc/self/maps; null when that cannot be told. Read once: the process's
    // malloc is fixed when it starts (a preload), and hosts describe it with every memory sample.
    private static string? ProcessMallocFile() => _processMallocFile.Value;

    private static readonly Lazy<string?> _processMallocFile = new(ReadProcessMallocFile);

    private static string? ReadProcessMallocFile()
    {
        if (!OperatingSystem.IsLinux() || !NativeLibrary.TryGetExport(NativeLibrary.GetMainProgramHandle(), "malloc", out var malloc))
        {
            return null;
        }

        var address = (ulong)malloc;
        foreach (var line in File.ReadLines("/proc/self/maps"))
        {
            // "start-end perms offset dev inode path"
            var dash = line.IndexOf('-', StringComparison.Ordinal);
            var space = line.IndexOf(' ', StringComparison.Ordinal);
            var slash = line.IndexOf('/', StringComparison.Ordinal);
            if (dash < 0 || space < dash || slash < 0
                || !ulong.TryParse(line.AsSpan(0, dash), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out var start)
                || !ulong.TryParse(line.AsSpan(dash + 1, space - dash - 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out var end))
            {
                continue;
            }

            if (address >= start && address < end)
            {
                return line[slash..];
            }
        }

        return null;
    }

    internal static IEnumerable<string> MappedFiles() =>
        OperatingSystem.IsLinux()
            ? File.ReadLines("/proc/self/maps").Select(l => l.IndexOf('/', StringComparison.Ordinal) is var i and >= 0 ? l[i..] : null).OfType<string>().Distinct()
            : [];

    private static class Malloc
    {
#pragma warning disable SYSLIB1054 // LibraryImport needs unsafe code, which this project keeps off; one call per process.
        [DllImport("libc", EntryPoint = "mallopt")]
        public static extern int mallopt(int parameter, int value);
#pragma warning restore SYSLIB1054
    }

    private static class Dl
    {
        [StructLayout(LayoutKind.Sequential)]
        public struct Info
        {
            public IntPtr FileName;
            public IntPtr FileBase;
            public IntPtr SymbolName;
            public IntPtr SymbolAddress;
        }

#pragma warning disable SYSLIB1054 // LibraryImport needs unsafe code, which this project keeps off; one call at open.
        [DllImport("libc", EntryPoint = "dladdr")]
        public static extern int dladdr(IntPtr address, out Info info);
#pragma warning restore SYSLIB1054
    }

    // Hands the package's importer one already loaded library, whatever name it asks for.
    private sealed class OneFileImporter(IntPtr handle) : NativeImport.INativeLibImporter
    {
        public IntPtr LoadLibrary(string name) => handle;

        public IntPtr GetProcAddress(IntPtr lib, string entryPoint) =>
            NativeLibrary.TryGetExport(lib, entryPoint, out var address) ? address : IntPtr.Zero;

        public void FreeLibrary(IntPtr lib)
        {
            // Never unloaded: RocksDB objects' finalizers call into it until the process ends.
        }

        public string Translate(string name, string suffix = "") => name + suffix;

        public object? GetDelegate(IntPtr lib, string entryPoint, Type delegateType) =>
            GetProcAddress(lib, entryPoint) is var address && address != IntPtr.Zero ? Marshal.GetDelegateForFunctionPointer(address, delegateType) : null;
    }
}
