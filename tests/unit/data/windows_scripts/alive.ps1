$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Id = '1234'
$ErrorActionPreference = 'Stop'
try {
    if (Get-Process -Id ([int]$Id) -ErrorAction SilentlyContinue) { exit 0 }
    exit 1
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
