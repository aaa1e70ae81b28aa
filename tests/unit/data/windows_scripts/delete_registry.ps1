$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Key = 'HKEY_LOCAL_MACHINE\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters'
$Name = 'Tcp1323Opts'
$Value = ''
$ErrorActionPreference = 'Stop'
try {
    $key = 'Registry::' + $Key
    if ($Value -eq '') {
        Remove-ItemProperty -LiteralPath $key -Name $Name -ErrorAction SilentlyContinue
    } else {
        $null = New-ItemProperty -LiteralPath $key -Name $Name -PropertyType DWord -Value ([int]$Value) -Force
    }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
