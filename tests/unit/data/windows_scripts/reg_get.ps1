$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Sub = 'SYSTEM\CurrentControlSet\Services\Tcpip\Parameters'
$Name = 'TcpWindowSize'
$ErrorActionPreference = 'Stop'
try {
    $k = [Microsoft.Win32.Registry]::LocalMachine.OpenSubKey($Sub)
    if ($null -eq $k -or @($k.GetValueNames()) -notcontains $Name) { [Console]::Out.WriteLine('<absent>'); exit 0 }
    try {
        $kind = [string]$k.GetValueKind($Name)
        $v = $k.GetValue($Name, $null, [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
    } finally { $k.Close() }
    switch ($kind) {
        'DWord' { $data = [string][BitConverter]::ToUInt32([BitConverter]::GetBytes([int]$v), 0) }
        'QWord' { $data = [string][BitConverter]::ToUInt64([BitConverter]::GetBytes([long]$v), 0) }
        'Binary' { $data = [Convert]::ToBase64String([byte[]]$v) }
        'MultiString' { $data = ConvertTo-Json -Compress -InputObject @($v | ForEach-Object { [string]$_ }) }
        default { $data = [string]$v }
    }
    [Console]::Out.WriteLine((ConvertTo-Json -Compress -InputObject ([ordered]@{kind = $kind; data = $data})))
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
