#!/usr/bin/env bash
# Asks this machine's NuGet source, package by package, whether the project's chosen
# dependencies restore. Prints one line per package and exits 1 if any is missing.
# Usage: bash tools/check-dependencies.sh
set -uo pipefail

declare -A wanted=(
  [RocksDB]="10.2.1.58549"
  [Lucene.Net]="4.8.0-beta00017"
  [Lucene.Net.Analysis.Common]="4.8.0-beta00017"
  [Lucene.Net.QueryParser]="4.8.0-beta00017"
  [BenchmarkDotNet]="0.14.0"
  [xunit]="2.9.3"
  [xunit.runner.visualstudio]="3.1.5"
  [Microsoft.NET.Test.Sdk]="18.0.1"
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
report="$work/report.txt"
for id in "${!wanted[@]}"; do
  dir="$work/$id"
  mkdir -p "$dir"
  cat > "$dir/probe.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>net10.0</TargetFramework><ManagePackageVersionsCentrally>false</ManagePackageVersionsCentrally></PropertyGroup>
  <ItemGroup><PackageReference Include="$id" Version="${wanted[$id]}" /></ItemGroup>
</Project>
PROJ
  if out="$(cd "$dir" && dotnet restore --nologo 2>&1)"; then
    echo "served      $id ${wanted[$id]}"
  else
    err="$(grep -o 'error NU[0-9]*: .*' <<<"$out" | head -1)"
    echo "NOT SERVED  $id ${wanted[$id]}: ${err:-restore failed}"
  fi
done > "$report"
sort "$report"
! grep -q '^NOT SERVED' "$report"
