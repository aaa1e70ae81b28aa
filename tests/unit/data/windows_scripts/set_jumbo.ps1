$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Name = 'Ethernet 2'
$Keyword = '*JumboPacket'
$Value = '9014'
$UpPolls = '240'
$ErrorActionPreference = 'Stop'
try {
    Set-NetAdapterAdvancedProperty -Name $Name -RegistryKeyword $Keyword -RegistryValue $Value
    # The miniport restarts: wait (bounded) until the adapter is Up again.
    for ($i = 0; (Get-NetAdapter -Name $Name).Status -ne 'Up'; $i++) {
        if ($i -ge [int]$UpPolls) { [Console]::Error.WriteLine("adapter $Name not Up after the change"); exit 3 }
        Start-Sleep -Milliseconds 250
    }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
