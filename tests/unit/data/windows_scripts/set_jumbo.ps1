$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$By = 'name'
$Adapter = 'Ethernet 2'
$Keyword = '*JumboPacket'
$Value = '9014'
$UpPolls = '240'
$ErrorActionPreference = 'Stop'
try {
    function Find-Adapter {
        $found = @(Get-NetAdapter | Where-Object {
            if ($By -eq 'guid') { $_.InterfaceGuid -eq $Adapter }
            elseif ($By -eq 'index') { $_.ifIndex -eq [int]$Adapter }
            else { $_.Name -eq $Adapter }
        })
        if ($found.Count -ne 1) {
            throw ('no adapter with ' + $By + ' ' + $Adapter + ' (' + $found.Count + ' found; Get-NetAdapter lists them)')
        }
        return $found[0]
    }
    function Get-AdvancedProperties($a) {
        @(Get-NetAdapterAdvancedProperty -AllProperties -ErrorAction SilentlyContinue | Where-Object { $_.ifAlias -eq $a.Name })
    }

    $a = Find-Adapter
    $p = @(Get-AdvancedProperties $a | Where-Object { $_.RegistryKeyword -eq $Keyword })
    if ($p.Count -ne 1) { throw ('adapter ' + $a.Name + ' has no property ' + $Keyword) }
    $p[0] | Set-NetAdapterAdvancedProperty -RegistryValue $Value
    # The miniport restarts: wait (bounded) until the adapter is Up again.
    for ($i = 0; (Get-NetAdapter -InterfaceIndex $a.ifIndex).Status -ne 'Up'; $i++) {
        if ($i -ge [int]$UpPolls) { [Console]::Error.WriteLine('adapter ' + $a.Name + ' not Up after the change'); exit 3 }
        Start-Sleep -Milliseconds 250
    }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
