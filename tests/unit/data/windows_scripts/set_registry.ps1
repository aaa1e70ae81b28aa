$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Sub = 'SYSTEM\CurrentControlSet\Services\Tcpip\Parameters'
$Name = 'TcpWindowSize'
$Kind = 'DWord'
$Data = '20971520'
$ErrorActionPreference = 'Stop'
try {
    $k = [Microsoft.Win32.Registry]::LocalMachine.CreateSubKey($Sub)
    try {
        if ($Kind -eq '') {
            $k.DeleteValue($Name, $false)
        } else {
            switch ($Kind) {
                'DWord' { $v = [BitConverter]::ToInt32([BitConverter]::GetBytes([uint32]$Data), 0) }
                'QWord' { $v = [BitConverter]::ToInt64([BitConverter]::GetBytes([uint64]$Data), 0) }
                'Binary' { $v = [Convert]::FromBase64String($Data) }
                'MultiString' { $v = [string[]]@(ConvertFrom-Json $Data | ForEach-Object { [string]$_ }) }
                default { $v = [string]$Data }
            }
            $k.SetValue($Name, $v, [Microsoft.Win32.RegistryValueKind]$Kind)
        }
    } finally { $k.Close() }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
