$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Name = 'nicbench-p'
$Ports = '5001-5002,6001-6002'
$Group = 'nicbench'
$ErrorActionPreference = 'Stop'
try {
    Remove-NetFirewallRule -Name ($Name + '-tcp'), ($Name + '-udp') -ErrorAction SilentlyContinue
    if ($Ports -ne '') {
        foreach ($proto in 'TCP', 'UDP') {
            $null = New-NetFirewallRule -Name ($Name + '-' + $proto.ToLower()) -DisplayName ($Name + ' ' + $proto) -Group $Group -Description $Ports -Direction Inbound -Action Allow -Protocol $proto -LocalPort ($Ports -split ',')
        }
    }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
