$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Id = '1234'
$ErrorActionPreference = 'Stop'
try {
    $null = & taskkill.exe /PID ([int]$Id) /T /F
    exit 0
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
