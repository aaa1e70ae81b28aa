$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Dir = 'C:\Temp\nicbench.0123456789ab'
$Polls = '500'
$ErrorActionPreference = 'Stop'
try {
    $rc = Join-Path $Dir 'rc'
    for ($i = 0; -not (Test-Path -LiteralPath $rc); $i++) {
        if ($i -ge [int]$Polls) { exit 1 }
        Start-Sleep -Milliseconds 10
    }
    exit 0
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
