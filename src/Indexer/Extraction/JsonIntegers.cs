namespace Indexing.Indexer;

internal enum IntegralResult
{
    Integral,
    Fractional,
    OutOfRange,
}

// Whether a JSON number is a whole number that fits a long, judged by its exact decimal value,
// not by how it is written: 1000, 1e3, 1000.0 and 10000e-1 are all 1000. Producers write
// integral values in all these forms (Python's json writes 3.0 for a float that holds 3, and
// JavaScript writes 1e21), and JSON gives them one meaning. Converting through double is not
// an option: above 2^53 it rounds, so 9007199254740993 would be taken as ...992.
internal static class JsonIntegers
{
    // Far beyond any exponent that can matter, yet far from overflowing a long when the digit
    // counts of a 2 GiB token are added to it, so clamping never changes a result.
    private const long ExponentClamp = 1_000_000_000_000;

    /// <summary>Classifies <paramref name="number"/>, which must be a valid JSON number token.</summary>
    public static IntegralResult Parse(ReadOnlySpan<byte> number, out long value)
    {
        value = 0;
        var i = 0;
        var negative = number[0] == '-';
        if (negative)
        {
            i++;
        }

        var integerStart = i;
        while (i < number.Length && IsDigit(number[i]))
        {
            i++;
        }

        var integerLength = i - integerStart;
        var fractionStart = i;
        if (i < number.Length && number[i] == '.')
        {
            fractionStart = ++i;
            while (i < number.Length && IsDigit(number[i]))
            {
                i++;
            }
        }

        var fractionLength = i - fractionStart;
        long exponent = 0;
        if (i < number.Length && (number[i] | 0x20) == 'e')
        {
            i++;
            var negativeExponent = number[i] == '-';
            if (number[i] is (byte)'-' or (byte)'+')
            {
                i++;
            }

            for (; i < number.Length; i++)
            {
                exponent = Math.Min(exponent * 10 + (number[i] - '0'), ExponentClamp);
            }

            if (negativeExponent)
            {
                exponent = -exponent;
            }
        }

        // The digits, integer then fraction, read as one run: value = run x 10^(exponent - fractionLength).
        var count = integerLength + fractionLength;

        var first = 0;
        while (first < count && Digit(number, integerStart, integerLength, first) == 0)
        {
            first++;
        }

        if (first == count)
        {
            return IntegralResult.Integral; // zero, however written: 0, -0.0, 0e99
        }

        var last = count - 1;
        while (Digit(number, integerStart, integerLength, last) == 0)
        {
            last--;
        }

        // value = run[first..last] x 10^scale, and the run ends in a non-zero digit, so the
        // value is whole exactly when scale is not negative.
        var scale = exponent - fractionLength + (count - 1 - last);
        if (scale < 0)
        {
            return IntegralResult.Fractional;
        }

        // 19 digits fit a ulong; 20 or more are at least 10^19, beyond any long.
        var digits = last - first + 1;
        if (digits + scale > 19)
        {
            return IntegralResult.OutOfRange;
        }

        ulong magnitude = 0;
        for (var k = first; k <= last; k++)
        {
            magnitude = magnitude * 10 + (ulong)Digit(number, integerStart, integerLength, k);
        }

        for (var s = 0L; s < scale; s++)
        {
            magnitude *= 10;
        }

        // long.MinValue's magnitude is one more than long.MaxValue.
        if (magnitude > (negative ? (ulong)long.MaxValue + 1 : long.MaxValue))
        {
            return IntegralResult.OutOfRange;
        }

        value = negative ? unchecked(-(long)magnitude) : (long)magnitude;
        return IntegralResult.Integral;
    }

    // Digit k of the run; the fraction starts one byte after the integer part, past the '.'.
    private static int Digit(ReadOnlySpan<byte> number, int integerStart, int integerLength, int k) =>
        number[integerStart + k + (k < integerLength ? 0 : 1)] - '0';

    private static bool IsDigit(byte b) => b is >= (byte)'0' and <= (byte)'9';
}
