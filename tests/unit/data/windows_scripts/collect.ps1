$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Dir = 'C:\Temp\nicbench.0123456789ab'
$ErrorActionPreference = 'Stop'
try {
    foreach ($name in 'out', 'err') {
        $f = Join-Path $Dir $name
        if (Test-Path -LiteralPath $f) { [Console]::Out.WriteLine([Convert]::ToBase64String([IO.File]::ReadAllBytes($f))) }
        else { [Console]::Out.WriteLine('') }
    }
    $rc = Join-Path $Dir 'rc'
    if (Test-Path -LiteralPath $rc) { [Console]::Out.WriteLine([IO.File]::ReadAllText($rc).Trim()) }
    else { [Console]::Out.WriteLine('') }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
