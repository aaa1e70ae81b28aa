$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Dir = 'C:\Temp\nicbench.0123456789ab'
$ErrorActionPreference = 'Stop'
try {
    Remove-Item -LiteralPath $Dir -Recurse -Force -ErrorAction SilentlyContinue
    exit 0
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
