$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Id = '1234'
$PollMs = '50'
$ErrorActionPreference = 'Stop'
try {
    for ($i = 0; $i -lt 360000; $i++) {
        if (-not (Get-Process -Id ([int]$Id) -ErrorAction SilentlyContinue)) { exit 0 }
        Start-Sleep -Milliseconds ([int]$PollMs)
    }
    exit 1
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
