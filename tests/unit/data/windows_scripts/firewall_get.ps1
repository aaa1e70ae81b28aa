$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Name = 'nicbench-p'
$ErrorActionPreference = 'Stop'
try {
    $r = Get-NetFirewallRule -Name ($Name + '-tcp') -ErrorAction SilentlyContinue
    if ($r) { [Console]::Out.WriteLine([string]$r.Description) } else { [Console]::Out.WriteLine('<absent>') }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
