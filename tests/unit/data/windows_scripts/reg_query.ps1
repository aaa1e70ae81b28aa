$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$global:LASTEXITCODE = $null
& 'reg.exe' 'query' 'HKLM\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters' '/v' 'TcpWindowSize'
if ($null -eq $global:LASTEXITCODE) { exit 127 }
exit $global:LASTEXITCODE
