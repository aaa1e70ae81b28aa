$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Port = '5001'
$Protocol = 'tcp'
$Polls = '143'
$ErrorActionPreference = 'Stop'
try {
    for ($i = 0; $i -lt [int]$Polls; $i++) {
        if ($Protocol -eq 'udp') { $l = Get-NetUDPEndpoint -LocalPort ([int]$Port) -ErrorAction SilentlyContinue }
        else { $l = Get-NetTCPConnection -State Listen -LocalPort ([int]$Port) -ErrorAction SilentlyContinue }
        if ($l) { exit 0 }
        Start-Sleep -Milliseconds 20
    }
    exit 1
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
