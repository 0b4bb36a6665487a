using System.Reflection;
using System.Reflection.Emit;

namespace Indexing.Indexer.Tests.Boundaries;

// Every type a compiled type refers to: its base type and interfaces, the types of its fields and of
// its methods' parameters, return values and locals, the exceptions it catches, and every type,
// field and method its IL names (calls, allocations, field loads, typeof, casts). Compiler-generated
// nested types (lambdas, iterators, async state machines) are reported by the caller as part of the
// type they are nested in. Generic arguments and array elements are reported too.
internal static class TypeReferences
{
    private const BindingFlags Declared = BindingFlags.DeclaredOnly | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static;

    private static readonly OpCode[] _oneByte = new OpCode[0x100];
    private static readonly OpCode[] _twoByte = new OpCode[0x100];

    static TypeReferences()
    {
        foreach (var field in typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static))
        {
            var code = (OpCode)field.GetValue(null)!;
            var value = (ushort)code.Value;
            if (value < 0x100)
            {
                _oneByte[value] = code;
            }
            else if ((value & 0xff00) == 0xfe00)
            {
                _twoByte[value & 0xff] = code;
            }
        }
    }

    /// <summary>The outermost type <paramref name="type"/> is nested in (itself when not nested).</summary>
    public static Type Outermost(Type type)
    {
        while (type.DeclaringType is { } outer)
        {
            type = outer;
        }

        return type;
    }

    public static HashSet<Type> Of(Type type)
    {
        var found = new HashSet<Type>();
        Add(found, type.BaseType);
        foreach (var contract in type.GetInterfaces())
        {
            Add(found, contract);
        }

        foreach (var field in type.GetFields(Declared))
        {
            Add(found, field.FieldType);
        }

        foreach (var method in type.GetMethods(Declared).Cast<MethodBase>().Concat(type.GetConstructors(Declared)))
        {
            if (method is MethodInfo info)
            {
                Add(found, info.ReturnType);
            }

            foreach (var parameter in method.GetParameters())
            {
                Add(found, parameter.ParameterType);
            }

            AddBody(found, type, method);
        }

        return found;
    }

    private static void AddBody(HashSet<Type> found, Type type, MethodBase method)
    {
        var body = method.GetMethodBody();
        if (body is null)
        {
            return;
        }

        foreach (var local in body.LocalVariables)
        {
            Add(found, local.LocalType);
        }

        foreach (var clause in body.ExceptionHandlingClauses)
        {
            if (clause.Flags == ExceptionHandlingClauseOptions.Clause)
            {
                Add(found, clause.CatchType);
            }
        }

        var il = body.GetILAsByteArray() ?? [];
        var typeArguments = type.IsGenericType ? type.GetGenericArguments() : null;
        var methodArguments = method.IsGenericMethod ? method.GetGenericArguments() : null;
        for (var at = 0; at < il.Length;)
        {
            var code = il[at] == 0xfe ? _twoByte[il[at + 1]] : _oneByte[il[at]];
            at += code.Size;
            switch (code.OperandType)
            {
                case OperandType.InlineNone:
                    break;
                case OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar:
                    at += 1;
                    break;
                case OperandType.InlineVar:
                    at += 2;
                    break;
                case OperandType.InlineI8 or OperandType.InlineR:
                    at += 8;
                    break;
                case OperandType.InlineSwitch:
                    at += 4 + (4 * BitConverter.ToInt32(il, at));
                    break;
                case OperandType.InlineField or OperandType.InlineMethod or OperandType.InlineTok or OperandType.InlineType:
                    AddMember(found, method.Module.ResolveMember(BitConverter.ToInt32(il, at), typeArguments, methodArguments));
                    at += 4;
                    break;
                default:
                    at += 4; // branch targets, 32-bit constants, strings, signatures
                    break;
            }
        }
    }

    private static void AddMember(HashSet<Type> found, MemberInfo? member)
    {
        switch (member)
        {
            case Type type:
                Add(found, type);
                break;
            case FieldInfo field:
                Add(found, field.DeclaringType);
                Add(found, field.FieldType);
                break;
            case MethodBase method:
                Add(found, method.DeclaringType);
                if (method is MethodInfo info)
                {
                    Add(found, info.ReturnType);
                    foreach (var argument in info.IsGenericMethod ? info.GetGenericArguments() : [])
                    {
                        Add(found, argument);
                    }
                }

                foreach (var parameter in method.GetParameters())
                {
                    Add(found, parameter.ParameterType);
                }

                break;
        }
    }

    private static void Add(HashSet<Type> found, Type? type)
    {
        if (type is null || type.IsGenericParameter || !found.Add(type))
        {
            return;
        }

        if (type.HasElementType)
        {
            Add(found, type.GetElementType());
        }

        if (type.IsGenericType)
        {
            foreach (var argument in type.GetGenericArguments())
            {
                Add(found, argument);
            }
        }
    }
}
