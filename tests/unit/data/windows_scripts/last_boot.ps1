$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$ErrorActionPreference = 'Stop'
try {
    [Console]::Out.WriteLine((Get-CimInstance -ClassName Win32_OperatingSystem).LastBootUpTime.ToUniversalTime().ToString('o'))
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
