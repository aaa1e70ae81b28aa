$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Exe = 'NTttcp.exe'
$ErrorActionPreference = 'Stop'
try {
    $c = Get-Command -Name $Exe -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
    if (-not $c) { exit 1 }
    [Console]::Out.WriteLine($c.Source)
    [Console]::Out.WriteLine([string]$c.FileVersionInfo.FileVersion)
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
