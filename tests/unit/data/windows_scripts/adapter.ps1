$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$By = 'name'
$Adapter = 'Ethernet 2'
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
    $ip = Get-NetIPInterface -InterfaceIndex $a.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue
    $addr = @(Get-NetIPAddress -InterfaceIndex $a.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue | ForEach-Object { [string]$_.IPAddress })
    $adv = @(Get-AdvancedProperties $a | ForEach-Object {
        [ordered]@{keyword = [string]$_.RegistryKeyword; display = [string]$_.DisplayName
                   value = @($_.RegistryValue | ForEach-Object { [string]$_ })
                   valid = @($_.ValidRegistryValues | ForEach-Object { [string]$_ })
                   min = $_.NumericParameterMinValue; max = $_.NumericParameterMaxValue
                   step = $_.NumericParameterStepValue}
    })
    [Console]::Out.WriteLine((ConvertTo-Json -Compress -Depth 4 -InputObject ([ordered]@{
        name = [string]$a.Name; description = [string]$a.InterfaceDescription
        status = [string]$a.Status; if_index = [int]$a.ifIndex; guid = [string]$a.InterfaceGuid
        mac = [string]$a.MacAddress; link_speed = [string]$a.LinkSpeed
        driver_provider = [string]$a.DriverProvider; driver_version = [string]$a.DriverVersion
        driver_description = [string]$a.DriverDescription; driver_date = [string]$a.DriverDate
        nl_mtu = $(if ($ip) { [int]$ip.NlMtu } else { $null })
        addresses = $addr; advanced = $adv
    })))
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
