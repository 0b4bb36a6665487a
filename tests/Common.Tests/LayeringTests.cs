using System.Reflection;
using System.Text.RegularExpressions;
using Indexing.Testing;

namespace Indexing.Common.Tests;

/// <summary>
/// The engine is one assembly, so the compiler no longer keeps its layers apart: these tests do.
/// Dependencies run one way, Common &lt;- Storage &lt;- Prefetcher &lt;- Indexer &lt;- Engine. A layer's source
/// names no namespace above it, and no type's signature (fields, properties, methods, base types) uses
/// a type from above it.
/// </summary>
public sealed class LayeringTests
{
    // Lowest first; each layer may use the ones before it. Common's types are in namespace Indexing itself.
    private static readonly string[] _layers = ["Common", "Storage", "Prefetcher", "Indexer", "Engine"];

    public static TheoryData<string> Layers => new(_layers[..^1]);

    [Theory]
    [MemberData(nameof(Layers))]
    public void Sources_NameNoLayerAbove(string layer)
    {
        var above = _layers.SkipWhile(l => l != layer).Skip(1).ToArray();
        // A using directive or a qualified name: `using Indexing.Indexer;`, `Indexing.Indexer.X`, `Indexer.X`.
        var layers = string.Join('|', above);
        var pattern = new Regex($@"\bIndexing\.({layers})\b|\b({layers})\.[A-Z]", RegexOptions.CultureInvariant);
        var folder = RepositoryFiles.Combine("src", layer);
        var offences = new List<string>();
        foreach (var file in Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories))
        {
            if (file.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            {
                continue;
            }

            var number = 0;
            foreach (var line in File.ReadLines(file))
            {
                number++;
                var code = line.TrimStart();
                if (code.StartsWith("//", StringComparison.Ordinal))
                {
                    continue;
                }

                if (pattern.IsMatch(line))
                {
                    offences.Add($"{Path.GetRelativePath(folder, file)}:{number}: {code}");
                }
            }
        }

        Assert.True(offences.Count == 0, $"src/{layer} uses a layer above it ({string.Join(", ", above)}):\n{string.Join('\n', offences)}");
    }

    [Theory]
    [MemberData(nameof(Layers))]
    public void Signatures_UseNoTypeFromALayerAbove(string layer)
    {
        var assembly = typeof(MessageText).Assembly;
        var above = _layers.SkipWhile(l => l != layer).Skip(1).Select(l => $"Indexing.{l}").ToArray();
        var offences = new List<string>();
        foreach (var type in assembly.GetTypes().Where(t => LayerOf(t) == layer))
        {
            foreach (var used in UsedTypes(type).SelectMany(Unwrapped))
            {
                if (used.Namespace is { } ns && above.Any(a => ns == a || ns.StartsWith(a + ".", StringComparison.Ordinal)))
                {
                    offences.Add($"{type.FullName} uses {used.FullName}");
                }
            }
        }

        Assert.True(offences.Count == 0, $"{layer} uses a layer above it:\n{string.Join('\n', offences.Distinct())}");
    }

    private static string? LayerOf(Type type)
    {
        var ns = type.Namespace ?? "";
        if (ns == "Indexing")
        {
            return "Common";
        }

        var parts = ns.Split('.');
        return parts.Length >= 2 && parts[0] == "Indexing" ? parts[1] : null;
    }

    // List<IndexOptions>, IndexOptions[], ref IndexOptions: the types inside count too.
    private static IEnumerable<Type> Unwrapped(Type type)
    {
        if (type.HasElementType)
        {
            return Unwrapped(type.GetElementType()!);
        }

        return type.IsGenericType ? type.GetGenericArguments().SelectMany(Unwrapped).Prepend(type) : [type];
    }

    private static IEnumerable<Type> UsedTypes(Type type)
    {
        const BindingFlags all = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;
        if (type.BaseType is { } baseType)
        {
            yield return baseType;
        }

        foreach (var i in type.GetInterfaces())
        {
            yield return i;
        }

        foreach (var field in type.GetFields(all))
        {
            yield return field.FieldType;
        }

        foreach (var method in type.GetMethods(all).Cast<MethodBase>().Concat(type.GetConstructors(all)))
        {
            if (method is MethodInfo info)
            {
                yield return info.ReturnType;
            }

            foreach (var parameter in method.GetParameters())
            {
                yield return parameter.ParameterType;
            }
        }
    }
}
